//! The run's CSV files (`selfplay.csv`, `train.csv`, `eval.csv`): their rows,
//! and how they are read and written. Every write rewrites the whole file
//! with [`crate::write_atomically`], so a reader (or a process killed
//! mid-write) never sees half a file. Only one process writes each file: in
//! turn that is `halatafl train`; in the asynchronous mode the learner
//! writes `selfplay.csv` and `train.csv` and the evaluator `eval.csv`, since
//! two processes rewriting one file would lose rows.

use crate::atomic::write_atomically;
use crate::game_rows::EvalRow;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A row that belongs to one generation (the key for removing or replacing
/// the rows of a stage that is run again).
pub trait GenerationRow: Serialize + DeserializeOwned + Default {
    /// The generation the row belongs to.
    fn generation(&self) -> u32;
}

/// A row of `selfplay.csv`: the totals of one generation's self-play games
/// (generation 0: the expert games of the bootstrap). The end-reason
/// columns are one per reason, rather than one column holding a map, so the
/// file reads as a plain table; they add up to `games`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SelfPlayRow {
    /// The generation whose checkpoint played the games.
    pub generation: u32,
    /// Games finished.
    pub games: usize,
    /// Training samples the games gave (written to the generation's shards).
    pub samples: usize,
    /// Games the foxes won.
    pub foxes_wins: usize,
    /// Games the geese won.
    pub geese_wins: usize,
    /// Drawn games.
    pub draws: usize,
    /// Games ended by the `fewer-than-nine` rule.
    pub fewer_than_nine: usize,
    /// Games ended by the `pen-filled` rule.
    pub pen_filled: usize,
    /// Games ended by the `no-moves` rule.
    pub no_moves: usize,
    /// Games ended by the `threefold` repetition rule.
    pub threefold: usize,
    /// Games ended by the `fifty-moves` rule.
    pub fifty_moves: usize,
    /// Games ended by the `fewer-than-four` rule (classic Fox and Geese).
    pub fewer_than_four: usize,
    /// Games a side resigned (not a rule of the game: self-play's shortcut).
    pub resigned: usize,
    /// Games cut off at self-play's ply limit.
    pub max_plies: usize,
    /// Mean game length in plies.
    pub mean_plies: f64,
    /// Games that would have resigned but were played out to check the
    /// resign threshold.
    pub resign_checked: usize,
    /// Of those, the games where resigning would have been wrong (the
    /// would-be resigner did not lose): the threshold's false positives.
    pub resign_false: usize,
    /// Games per second. Asynchronous runs sum the workers' seconds, so
    /// there it is a rate per worker.
    pub games_per_second: f64,
    /// Plies played per second, measured as `games_per_second` is.
    pub positions_per_second: f64,
    /// Time spent playing, in seconds (summed over workers when
    /// asynchronous).
    pub seconds: f64,
    /// Mean number of positions per network batch (0 for expert games).
    pub net_batch_mean: f64,
    /// Share of the evaluation cache's lookups that hit (0 for expert
    /// games).
    pub cache_hit_rate: f64,
}

/// A row of `train.csv`: the means over the training steps since the
/// previous row (one row every `train.log_every` steps and at the end of a
/// stage).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TrainRow {
    /// The generation being trained (its checkpoint is written at the end).
    pub generation: u32,
    /// The trainer's step count at this row, counted over the whole run.
    pub step: u64,
    /// Mean policy loss: cross-entropy against the samples' search policy.
    pub policy_loss: f64,
    /// Mean value loss: cross-entropy of the win/draw/loss head against
    /// the samples' value targets.
    pub value_loss: f64,
    /// Mean L2 penalty on the weights, already times its coefficient.
    pub l2_loss: f64,
    /// Mean of the loss that was minimised: the weighted sum of the terms,
    /// the moves-left head's included when the network has one (that term
    /// has no column of its own, so older runs' files still read).
    pub total_loss: f64,
    /// Learning rate of the row's last step.
    pub lr: f64,
    /// Mean gradient norm before clipping.
    pub grad_norm: f64,
    /// Training samples per second over the row's steps.
    pub samples_per_second: f64,
    /// Samples in the replay window the batches were drawn from.
    pub window_samples: usize,
}

/// A row of `accuracy.csv`: an evaluated generation's network judged on
/// the solved suite of `[eval] suite` (see `halatafl_solver::accuracy`),
/// one row per agent and group. An error is a move whose exact value is
/// worse than the best move's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRow {
    /// The generation whose checkpoint was judged.
    pub generation: u32,
    /// `raw` (the policy's favourite move, no search) or `search` (the
    /// evaluation games' search, `eval.simulations`).
    pub agent: String,
    /// `all`, `stage <beginning|middle|end>`, `to move: <side>` or
    /// `difficulty <easy|medium|hard>`.
    pub group: String,
    /// Positions of the group judged.
    pub positions: usize,
    /// Positions where the agent's move lost value.
    pub errors: usize,
    /// `errors / positions`.
    pub error_rate: f64,
    /// Its 95% Wilson interval, low ...
    pub error_lo: f64,
    /// ... and high.
    pub error_hi: f64,
    /// Positions where the agent reported a value ...
    pub valued: usize,
    /// ... and where it was the proven one (win > 1/3, loss < -1/3).
    pub value_right: usize,
}

impl GenerationRow for AccuracyRow {
    fn generation(&self) -> u32 {
        self.generation
    }
}

/// A run CSV that cannot be read as its rows: the file and line, and why.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{path}, line {line}: {why}")]
pub struct CsvError {
    /// The CSV file.
    pub path: PathBuf,
    /// The line, from 1 (the header); 0 when no line is concerned.
    pub line: u64,
    /// The CSV reader's message, or the columns the header lacks.
    pub why: String,
}

/// Reads a run CSV (`selfplay.csv`, `train.csv`, `eval.csv`) as `T` rows. A
/// missing or empty file has none: the stage has not written rows yet, or
/// resuming removed them all. Any other file must have a header that names
/// every column of `T` (extra columns are ignored, as serde ignores them):
/// without that check a file of one line of anything read as "no rows", so
/// `report` skipped it silently and the next stage replaced it.
pub fn read_csv_rows<T: DeserializeOwned + Serialize + Default>(
    path: &Path,
) -> Result<Vec<T>, CsvError> {
    let error = |line: u64, why: String| CsvError {
        path: path.to_path_buf(),
        line,
        why,
    };
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut reader = csv::Reader::from_path(path).map_err(|e| error(0, e.to_string()))?;
    let header = reader
        .headers()
        .map_err(|e| error(1, e.to_string()))?
        .clone();
    if header.is_empty() {
        return Ok(Vec::new());
    }
    let missing: Vec<String> = csv_columns::<T>()
        .into_iter()
        .filter(|c| !header.iter().any(|h| h == c))
        .collect();
    if !missing.is_empty() {
        let named = match missing.len() {
            n if n > 3 => format!("{} and {} more", missing[..3].join(", "), n - 3),
            _ => missing.join(", "),
        };
        return Err(error(
            1,
            format!(
                "the header lacks the column(s) {named}: not a file this version of halatafl \
                 wrote, or damaged"
            ),
        ));
    }
    reader
        .deserialize()
        .enumerate()
        .map(|(i, row)| {
            row.map_err(|e| {
                let line = e.position().map_or(i as u64 + 2, |p| p.line());
                error(line, e.to_string())
            })
        })
        .collect()
}

/// The column names of a CSV of `T` rows, in order (the header csv writes).
fn csv_columns<T: Serialize + Default>() -> Vec<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.serialize(T::default()).expect("a row serialises");
    let bytes = writer.into_inner().expect("writing to memory");
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header = reader.headers().expect("csv just written").clone();
    header.iter().map(str::to_string).collect()
}

/// A run CSV that could not be rewritten.
#[derive(Debug, Error)]
pub enum RowsError {
    /// The rows already in the file do not read, or a row does not write.
    #[error(transparent)]
    Csv(#[from] CsvError),
    /// The atomic write failed.
    #[error("{path}: {source}")]
    Io {
        /// The CSV file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

impl GenerationRow for SelfPlayRow {
    fn generation(&self) -> u32 {
        self.generation
    }
}

impl GenerationRow for TrainRow {
    fn generation(&self) -> u32 {
        self.generation
    }
}

impl GenerationRow for EvalRow {
    fn generation(&self) -> u32 {
        self.generation
    }
}

/// Rewrites a CSV atomically with `rows`.
pub fn write_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), RowsError> {
    let io = |source| RowsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    for r in rows {
        writer.serialize(r).map_err(|e| {
            RowsError::Csv(CsvError {
                path: path.to_path_buf(),
                line: 0,
                why: format!("a row cannot be written: {e}"),
            })
        })?;
    }
    let bytes = writer.into_inner().map_err(|e| io(e.into_error()))?;
    write_atomically(path, &bytes).map_err(io)
}

/// Adds `new` at the end of the CSV by rewriting it whole, atomically (see
/// the module doc): a file never holds half a row.
pub fn append_rows<T: GenerationRow>(path: &Path, new: Vec<T>) -> Result<(), RowsError> {
    let mut rows: Vec<T> = read_csv_rows(path)?;
    rows.extend(new);
    write_rows(path, &rows)
}

/// Keeps only rows whose generation passes `keep` (removes a crashed stage's rows).
pub fn retain_rows<T: GenerationRow>(
    path: &Path,
    keep: impl Fn(u32) -> bool,
) -> Result<(), RowsError> {
    let rows: Vec<T> = read_csv_rows(path)?;
    let before = rows.len();
    let kept: Vec<T> = rows.into_iter().filter(|r| keep(r.generation())).collect();
    if kept.len() != before {
        write_rows(path, &kept)?;
    }
    Ok(())
}

/// Replaces the rows of `generation` with `new`, in one atomic write: rows of
/// other generations keep their order and the new ones go at the end. Running
/// it twice with the same rows leaves the file as once, which is what makes a
/// process that is killed after its commit point and restarted write each
/// generation's rows exactly once.
pub fn replace_generation_rows<T: GenerationRow>(
    path: &Path,
    generation: u32,
    new: Vec<T>,
) -> Result<(), RowsError> {
    let mut rows: Vec<T> = read_csv_rows(path)?;
    rows.retain(|r| r.generation() != generation);
    rows.extend(new);
    write_rows(path, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacing_a_generation_twice_writes_its_rows_once() {
        let dir = std::env::temp_dir().join(format!("halatafl-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("train.csv");
        let row = |generation, step| TrainRow {
            generation,
            step,
            ..TrainRow::default()
        };
        append_rows(&path, vec![row(1, 5), row(1, 10)]).unwrap();
        for _ in 0..2 {
            replace_generation_rows(&path, 2, vec![row(2, 15), row(2, 20)]).unwrap();
        }
        let steps: Vec<(u32, u64)> = read_csv_rows::<TrainRow>(&path)
            .unwrap()
            .iter()
            .map(|r| (r.generation, r.step))
            .collect();
        assert_eq!(steps, vec![(1, 5), (1, 10), (2, 15), (2, 20)]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
