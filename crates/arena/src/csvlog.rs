//! Game CSV files: written and appended through the one atomic writer of
//! `halatafl_dataio` (appending copies the existing file into the temporary
//! one first, so nothing is ever left half-written), and read back with
//! every row checked.

use crate::ArenaError;
pub use halatafl_dataio::{same_file, GameRow};
use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};

/// Thinking time summed over games and the moves it was spent on (the random
/// opening plies are nobody's), for time per move: "equal time" comparisons
/// read it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThinkingTime {
    /// Wall-clock seconds spent in `choose`.
    pub seconds: f64,
    /// Moves chosen in that time.
    pub moves: usize,
}

impl ThinkingTime {
    /// Counts the time and moves of whoever played `side` in `row`.
    pub fn add(&mut self, row: &GameRow, side: halatafl_rules::Side) {
        self.seconds += row.seconds_of(side);
        self.moves += row.moves_by(side);
    }

    /// Mean thinking time per move, in milliseconds (0 without moves).
    pub fn ms_per_move(&self) -> f64 {
        1000.0 * self.seconds / self.moves.max(1) as f64
    }
}

fn io_error(path: &Path, e: std::io::Error) -> ArenaError {
    ArenaError::Io {
        path: path.display().to_string(),
        source: e,
    }
}

fn encode<T: Serialize>(rows: &[T], header: bool) -> Result<Vec<u8>, ArenaError> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(header)
        .from_writer(Vec::new());
    for row in rows {
        w.serialize(row)?;
    }
    w.into_inner()
        .map_err(|e| ArenaError::Csv(e.into_error().into()))
}

/// Where a write to `path` must land (see `halatafl_dataio::write_target`).
pub fn write_target(path: &Path) -> Result<PathBuf, ArenaError> {
    halatafl_dataio::write_target(path).map_err(target_error)
}

fn target_error(e: halatafl_dataio::WriteTargetError) -> ArenaError {
    match e {
        halatafl_dataio::WriteTargetError::NotAFile { path, what } => {
            ArenaError::NotAFile { path, what }
        }
        halatafl_dataio::WriteTargetError::Io { path, source } => ArenaError::Io { path, source },
    }
}

/// Replaces `path` with `bytes` through the one atomic writer, making its
/// directory first.
fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<(), ArenaError> {
    let path = &write_target(path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    halatafl_dataio::write_atomically(path, bytes).map_err(|e| io_error(path, e))
}

/// `rows` as CSV text with a header line, the bytes `write_csv_atomic`
/// writes (for a download rather than a file).
pub fn csv_bytes<T: Serialize>(rows: &[T]) -> Result<Vec<u8>, ArenaError> {
    encode(rows, true)
}

/// Writes `rows` (with a header line) to `path`, replacing it atomically.
pub fn write_csv_atomic<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), ArenaError> {
    replace_atomically(path, &encode(rows, true)?)
}

/// Appends `rows` to the CSV at `path` (creating it with a header if it does
/// not exist), atomically. The existing header must match the rows' columns.
pub fn append_csv_atomic<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), ArenaError> {
    let path = &write_target(path)?;
    let fresh = encode(rows, true)?;
    let old = match fs::read(path) {
        Ok(bytes) if !bytes.is_empty() => bytes,
        Ok(_) => return replace_atomically(path, &fresh),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return replace_atomically(path, &fresh)
        }
        Err(e) => return Err(io_error(path, e)),
    };
    let first_line = |b: &[u8]| {
        let end = b.iter().position(|&c| c == b'\n').unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).trim_end().to_string()
    };
    if !rows.is_empty() && first_line(&old) != first_line(&fresh) {
        return Err(ArenaError::HeaderMismatch {
            path: path.display().to_string(),
            found: first_line(&old),
            expected: first_line(&fresh),
        });
    }
    let mut bytes = old;
    if !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(&encode(rows, false)?);
    replace_atomically(path, &bytes)
}

/// Reads the game rows of a CSV written by [`write_csv_atomic`]. A path that
/// is not a regular file (a directory reads as empty on some systems) is
/// refused.
pub fn read_game_rows(path: &Path) -> Result<Vec<GameRow>, ArenaError> {
    let file = fs::File::open(path).map_err(|e| io_error(path, e))?;
    let meta = file.metadata().map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(ArenaError::NotAFile {
            path: path.display().to_string(),
            what: if meta.is_dir() {
                "a directory".into()
            } else {
                "not a regular file".into()
            },
        });
    }
    parse_game_rows(&path.display().to_string(), std::io::BufReader::new(file))
}

/// [`read_game_rows`] from any reader; `name` names it in errors.
pub fn parse_game_rows(name: &str, input: impl std::io::Read) -> Result<Vec<GameRow>, ArenaError> {
    let mut r = csv::Reader::from_reader(input);
    let headers = r.headers()?.clone();
    let mut rows = Vec::new();
    for record in r.records() {
        let record = record?;
        let line = record.position().map_or(0, |p| p.line());
        let bad = |why: String| ArenaError::BadRow {
            path: name.to_string(),
            line,
            why,
        };
        let row: GameRow = record
            .deserialize(Some(&headers))
            .map_err(|e| bad(e.to_string()))?;
        row.check().map_err(bad)?;
        rows.push(row);
    }
    Ok(rows)
}
