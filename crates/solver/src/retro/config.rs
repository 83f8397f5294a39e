//! What every retrograde build shares: its settings, their bounds, and
//! what can go wrong.

use crate::dag::DagError;
use crate::replay::LineFailure;
use thiserror::Error;

/// What the retrograde method cannot do.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RetroError {
    /// The plain tables were asked about a position the DAG method's
    /// conditions exclude (variant, quiet counter).
    #[error(transparent)]
    Position(#[from] DagError),
    /// The tables would take more memory than allowed; checked before
    /// anything is allocated.
    #[error("the tables up to {geese} geese need {need_mib} MiB, more than the {limit_mib} MiB allowed (--tt-mb for this method, or the memory available)")]
    Memory {
        /// The most geese asked for.
        geese: u32,
        /// What the tables up to that many geese need, in MiB.
        need_mib: u64,
        /// The limit (given, or what the system reports available), in MiB.
        limit_mib: u64,
    },
    /// The position's quiet counter is above the highest at which the
    /// sideways tables answer for its level.
    #[error("quiet counter {quiet}: the sideways tables answer this position's level up to counter {most} (0 is right after a capture or a forward step, or a start); use the df-pn method")]
    SidewaysQuiet {
        /// The position's quiet counter.
        quiet: u16,
        /// The highest counter the tables answer for its level.
        most: u16,
    },
    /// The sideways tables were asked about another variant (its name).
    #[error("the sideways tables hold classic Fox and Geese with sideways steps; this is {0}")]
    NotSideways(String),
    /// The position's layer was dropped after the build to save memory.
    #[error("a position with {found} geese: the tables kept only the layers of {least} to {most} geese (the others were dropped to fit in memory)")]
    Dropped {
        /// Geese in the position.
        found: u32,
        /// Fewest geese of a layer still held.
        least: u32,
        /// Most geese of a layer held.
        most: u32,
    },
    /// A thread count outside 1 to [`MAX_THREADS`].
    #[error("--threads {0}: the retrograde method takes 1 to {MAX_THREADS} threads")]
    Threads(usize),
    /// More geese than the tables hold (or than a build may ask for).
    #[error("this position has {found} geese; these tables hold placements of up to {most}")]
    TooManyGeese {
        /// Geese in the position, or asked for.
        found: u32,
        /// The most the tables hold.
        most: u32,
    },
    /// The position is on the other board: its lines, and so its values,
    /// differ.
    #[error("the tables were built for the {built} board, this position is on the {asked} board")]
    Board {
        /// `plain` or `corner-links`: the tables' board.
        built: &'static str,
        /// The position's board.
        asked: &'static str,
    },
    /// A saved chain-plane file that cannot be written, read or trusted.
    #[error("saved chain planes {path}: {what}")]
    SavedChains {
        /// The file (or the directory for it).
        path: String,
        /// What is wrong.
        what: String,
    },
    /// A replayed line contradicts the tables: a bug, reported with the
    /// line that shows it.
    #[error("line {line}, after {moves}: {what}")]
    Inconsistent {
        /// The line (game) number, from 1.
        line: usize,
        /// The moves played on it so far.
        moves: String,
        /// What went wrong there.
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

impl RetroConfig {
    /// Refuses, before anything is allocated, a build of up to `max_geese`
    /// geese that a bad setting makes impossible: a thread count outside
    /// 1 to [`MAX_THREADS`], more geese than [`super::MAX_GEESE`], or
    /// `need_mib` of memory over `limit_mib` (the build's own plan of what it
    /// needs, against the configured cap or what the system has available).
    pub(crate) fn check_build(
        &self,
        max_geese: u32,
        need_mib: u64,
        limit_mib: Option<u64>,
    ) -> Result<(), RetroError> {
        if !(1..=MAX_THREADS).contains(&self.threads) {
            return Err(RetroError::Threads(self.threads));
        }
        if max_geese > super::MAX_GEESE {
            return Err(RetroError::TooManyGeese {
                found: max_geese,
                most: super::MAX_GEESE,
            });
        }
        match limit_mib {
            Some(limit_mib) if need_mib > limit_mib => Err(RetroError::Memory {
                geese: max_geese,
                need_mib,
                limit_mib,
            }),
            _ => Ok(()),
        }
    }
}
