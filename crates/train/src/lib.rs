//! Self-play training from a config: the project's main job. See [`run`] for
//! the run directory and its stages, [`selfplay`] for game generation,
//! [`shard`] for the sample files, [`bootstrap`] for the warm start from an expert, and [`config`] for every knob.

pub mod bootstrap;
pub mod config;
pub mod run;
pub mod selfplay;
pub mod shard;

pub use config::RunConfig;
pub use run::{Run, Stage};
