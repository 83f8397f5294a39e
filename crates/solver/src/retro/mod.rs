//! Retrograde analysis of classic Fox and Geese: every position of the
//! game, solved by building tables layer by layer from the fewest geese up.
//!
//! - [`index`]: the board as the tables number it, the ranking of
//!   placements, layers of bits, levels and jobs (what both builds stand on);
//! - [`config`]: the settings every build shares, their bounds, and errors;
//! - [`plain`]: the game without sideways steps, where no draw is possible
//!   (one bit per placement and fox point);
//! - [`sideways`]: the game with sideways steps, with draws and the
//!   fifty-move rule exact (four planes per placement);
//! - [`saved_chains`]: a sideways build's chain planes on disk, so a long
//!   build resumes.
//!
//! Both builds check their tables with the shared line checker of
//! [`crate::replay`].

pub mod config;
pub mod index;
pub mod plain;
pub mod saved_chains;
pub mod sideways;

pub use config::{RetroConfig, RetroError, MAX_THREADS};
pub use index::MAX_GEESE;
pub use plain::{classic_variant, memory_bytes, LayerStats, RetroTables, RetroValue};
