//! The train crate's one error type. Every stage (in turn or as its own
//! process) returns it; the CLI prints it through anyhow. Errors of the crates
//! below keep their own types (and their messages, which name the file and
//! what is wrong); what this crate adds names the run file or the generation.

use crate::config::ConfigError;
use crate::shard::ShardError;
use halatafl_arena::ArenaError;
use halatafl_dataio::{CsvError, RowsError};
use halatafl_nn::checkpoint::CheckpointError;
use halatafl_nn::DeviceError;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a training run, or one of its stages, stopped.
#[derive(Debug, Error)]
pub enum TrainError {
    /// A file or folder of the run that could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A run file that was read but is not what halatafl writes
    /// (`progress.json`, `run.json`, a CSV that does not serialise).
    #[error("{path}: {why}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A run CSV (`selfplay.csv`, `train.csv`, ...) that cannot be read as
    /// its rows.
    #[error(transparent)]
    Csv(#[from] CsvError),
    /// A run CSV that could not be rewritten.
    #[error(transparent)]
    Rows(#[from] RowsError),
    /// A sample shard that could not be written or read.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// A config key out of its range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A config file that cannot be read or parsed (the message names it).
    #[error("{0}")]
    ConfigFile(String),
    /// A checkpoint that could not be read or loaded.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// Evaluation or expert games that could not be played or recorded (an
    /// agent not built from its spec or breaking its contract, a games
    /// file).
    #[error(transparent)]
    Arena(#[from] ArenaError),
    /// `run.device` names no device libtorch can use (on this machine).
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The expert's games of generation 0 could not become samples.
    #[error("[bootstrap] {0}")]
    Bootstrap(String),
    /// A stage of one generation failed (a non-finite loss, no samples, a
    /// search without a move); `why` says what and what was left undone.
    #[error("generation {generation}: {why}")]
    Stage {
        /// The generation whose stage failed.
        generation: u32,
        /// What failed and what was left undone.
        why: String,
    },
    /// The run directory is not in a state this command may work on (it
    /// already holds a run, lacks `progress.json` but holds completed work,
    /// belongs to the other mode, or another process holds its lock).
    #[error("{0}")]
    Refused(String),
}

impl TrainError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> TrainError {
        TrainError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// `map_err` helper: the I/O error of an operation on `path`.
pub(crate) fn at(path: &Path) -> impl FnOnce(std::io::Error) -> TrainError + '_ {
    move |source| TrainError::io(path, source)
}
