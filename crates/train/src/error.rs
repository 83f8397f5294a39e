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

#[derive(Debug, Error)]
pub enum TrainError {
    /// A file or folder of the run that could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A run file that was read but is not what halatafl writes
    /// (`progress.json`, `run.json`, a CSV that does not serialise).
    #[error("{path}: {why}")]
    BadFile { path: PathBuf, why: String },
    #[error(transparent)]
    Csv(#[from] CsvError),
    #[error(transparent)]
    Rows(#[from] RowsError),
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A config file that cannot be read or parsed (the message names it).
    #[error("{0}")]
    ConfigFile(String),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Arena(#[from] ArenaError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The expert's games of generation 0 could not become samples.
    #[error("[bootstrap] {0}")]
    Bootstrap(String),
    /// A stage of one generation failed (a non-finite loss, no samples, a
    /// search without a move); `why` says what and what was left undone.
    #[error("generation {generation}: {why}")]
    Stage { generation: u32, why: String },
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
