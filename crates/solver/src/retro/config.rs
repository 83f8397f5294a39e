//! What every retrograde build shares: its settings, their bounds, and
//! what can go wrong.

use crate::dag::DagError;
use crate::replay::LineFailure;
use thiserror::Error;

/// What the retrograde method cannot do.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RetroError {
    #[error(transparent)]
    Position(#[from] DagError),
    #[error("the tables up to {geese} geese need {need_mib} MiB, more than the {limit_mib} MiB allowed (--tt-mb for this method, or the memory available)")]
    Memory {
        geese: u32,
        need_mib: u64,
        limit_mib: u64,
    },
    #[error("quiet counter {quiet}: the sideways tables answer this position's level up to counter {most} (0 is right after a capture or a forward step, or a start); use the df-pn method")]
    SidewaysQuiet { quiet: u16, most: u16 },
    #[error("the sideways tables hold classic Fox and Geese with sideways steps; this is {0}")]
    NotSideways(String),
    #[error("a position with {found} geese: the tables kept only the layers of {least} to {most} geese (the others were dropped to fit in memory)")]
    Dropped { found: u32, least: u32, most: u32 },
    #[error("--threads {0}: the retrograde method takes 1 to {MAX_THREADS} threads")]
    Threads(usize),
    #[error("this position has {found} geese; these tables hold placements of up to {most}")]
    TooManyGeese { found: u32, most: u32 },
    #[error("the tables were built for the {built} board, this position is on the {asked} board")]
    Board {
        built: &'static str,
        asked: &'static str,
    },
    #[error("saved chain planes {path}: {what}")]
    SavedChains { path: String, what: String },
    #[error("line {line}, after {moves}: {what}")]
    Inconsistent {
        line: usize,
        moves: String,
        what: String,
    },
}

/// The most worker threads a retrograde build takes: far above the cores of
/// any machine it runs on, well below what would exhaust the system's
/// threads (each also takes its share of the work buffers).
pub const MAX_THREADS: usize = 256;

/// Settings of a retrograde build. Every default is here.
#[derive(Clone, Debug, PartialEq)]
pub struct RetroConfig {
    /// Worker threads (rayon).
    pub threads: usize,
    /// The most memory the tables may take, in MiB; `None`: what the
    /// system reports available (`/proc/meminfo`), unchecked where it
    /// reports nothing.
    pub memory_limit_mib: Option<u64>,
    /// Builds with sideways steps: a directory where each layer's chain
    /// planes are saved once built, and from which a build resumes above
    /// the most geese saved there ([`super::saved_chains`]); `None`:
    /// nothing is saved or read.
    pub layers_dir: Option<std::path::PathBuf>,
}

impl Default for RetroConfig {
    fn default() -> RetroConfig {
        RetroConfig {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_limit_mib: None,
            layers_dir: None,
        }
    }
}

impl From<LineFailure> for RetroError {
    fn from(f: LineFailure) -> RetroError {
        RetroError::Inconsistent {
            line: f.line,
            moves: f.moves,
            what: f.what,
        }
    }
}
