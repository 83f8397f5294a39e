//! A training run, for people: `halatafl report <run>` writes the key plots
//! (PNG and SVG) and a Markdown summary into `<run>/report/`, with no Python.
//!
//! The run directory's CSV files are read with the row structs the trainer
//! writes them with ([`SelfPlayRow`](halatafl_dataio::SelfPlayRow),
//! [`TrainRow`](halatafl_dataio::TrainRow),
//! [`EvalRow`](halatafl_dataio::EvalRow) from `halatafl-dataio`), so a column the trainer renames breaks this crate's
//! build rather than its output; and the report needs no libtorch.
//!
//! Strength is the trained network's score against each evaluation opponent,
//! `(wins + draws / 2) / games`, overall and per side, with the 95% Wilson
//! score interval (Wilson 1927; see `halatafl_arena::stats`), the same numbers
//! `halatafl match` prints. Which side the network played is read from the
//! game row: the network's spec names its own checkpoint (`gen_NNNN`) of the
//! row's generation; when both or neither spec do (a run directory that was
//! moved), the arena's numbering decides: the first agent of a match, the
//! network, has the foxes in odd-numbered games.

#![warn(missing_docs)]

mod data;
mod markdown;
mod plots;

pub use data::{eval_scores, load_run, trained_side, Perspective, RunData, ScorePoint};
pub use markdown::markdown_report;
pub use plots::{register_font, Figure};

use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why no report was written. Each names the file or directory concerned,
/// since the command's user has to go and look at it.
#[derive(Debug, Error)]
pub enum ReportError {
    /// A file or directory that could not be read, created or written, or
    /// a `config.toml` or `run.json` that does not parse.
    #[error("{path}: {why}")]
    Io {
        /// The file or directory.
        path: String,
        /// The operating system's or the parser's message.
        why: String,
    },
    /// A run CSV that is not what the trainer writes (file, line, why).
    #[error(transparent)]
    Csv(#[from] halatafl_dataio::CsvError),
    /// The directory has no `config.toml`, so it is not a run (checked first,
    /// so a mistyped path does not report an empty run).
    #[error("{path} is not a run directory (no config.toml; make one with `halatafl train`)")]
    NotARun {
        /// The directory given.
        path: String,
    },
    /// The plotting library failed while drawing a figure.
    #[error("drawing {file}: {why}")]
    Plot {
        /// The PNG or SVG file being drawn.
        file: String,
        /// The plotting library's message.
        why: String,
    },
}

/// What [`write_report`] wrote.
#[derive(Clone, Debug)]
pub struct ReportFiles {
    /// The folder the report went into.
    pub dir: PathBuf,
    /// Every file written, the Markdown summary last.
    pub files: Vec<PathBuf>,
}

/// Reads the run in `run_dir` and writes `strength`, `training`,
/// `selfplay` (and, for a run with a suite, `accuracy`) as `.png` and
/// `.svg`, and `report.md`, into `out_dir`
/// (`<run_dir>/report` when `None`). Each file is written atomically.
pub fn write_report(run_dir: &Path, out_dir: Option<&Path>) -> Result<ReportFiles, ReportError> {
    let run = load_run(run_dir)?;
    let dir = out_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| run_dir.join("report"));
    std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
    let mut files = Vec::new();
    for figure in Figure::ALL {
        files.extend(plots::draw_figure(figure, &run, &dir)?);
    }
    if !run.accuracy.is_empty() {
        files.extend(plots::draw_figure(Figure::Accuracy, &run, &dir)?);
    }
    let md = dir.join("report.md");
    write_atomically(&md, markdown_report(&run).as_bytes())?;
    files.push(md);
    Ok(ReportFiles { dir, files })
}

pub(crate) fn io_error(path: &Path, e: impl std::fmt::Display) -> ReportError {
    ReportError::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    }
}

/// Writes `bytes` to `path` with the one atomic writer.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    halatafl_dataio::write_atomically(path, bytes).map_err(|e| io_error(path, e))
}
