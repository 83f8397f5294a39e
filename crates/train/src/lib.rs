//! Self-play training from a config: the project's main job. See [`run`] for
//! the run directory and how `halatafl train` runs its stages in turn,
//! [`selfplay_stage`], [`learn_stage`] and [`eval_stage`] for the stages,
//! [`selfplay`] for game generation, [`shard`] for the sample files, the
//! rows of `halatafl_dataio` (re-exported in [`run`]) for the CSV files,
//! [`bootstrap`] for the warm start from an expert, and [`config`] for
//! every knob.

#![warn(missing_docs)]

pub mod bootstrap;
pub mod config;
pub mod error;
pub mod eval_stage;
pub mod learn_stage;
pub mod proven_targets;
pub mod run;
pub mod running;
pub mod selfplay;
pub mod selfplay_stage;
pub mod selfplay_stats;
pub mod shard;
pub mod starts;

pub use config::RunConfig;
pub use error::TrainError;
pub use run::{Run, Stage};
