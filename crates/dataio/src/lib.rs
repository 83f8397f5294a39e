//! The files every part of halatafl writes and reads, in one torch-free
//! crate at the bottom of the workspace (KataGo's `dataio`):
//!
//! - [`atomic`]: the one way a file is written: to a temporary name beside
//!   it, synced, renamed over it, the directory synced; the temporary file
//!   removed when anything fails; links written through, directories and
//!   devices refused. Checkpoints, shards, CSV files, reports and the
//!   solver's saved layers all go through it.
//! - [`game_rows`]: the per-game CSV row of matches, tournaments and
//!   ladders, and the evaluation row of runs (the same columns plus the
//!   generation and the opponent).
//! - [`run_rows`]: the other CSV files of a run directory (`selfplay.csv`,
//!   `train.csv`) and how run CSVs are read, appended and rewritten.
//!
//! The report (plots and Markdown of a run) needs only this crate and the
//! arena's statistics, so it builds and runs without libtorch.

#![warn(missing_docs)]

pub mod atomic;
pub mod game_rows;
pub mod run_rows;

pub use atomic::{
    read_bounded_file, same_file, temp_file_pid, write_atomically, write_atomically_with,
    write_target, WriteTargetError,
};
pub use game_rows::{EvalRow, GameRow, SelfPlayGameRow};
pub use run_rows::{
    read_csv_rows, AccuracyRow, CsvError, GenerationRow, RowsError, SelfPlayRow, TrainRow,
};
