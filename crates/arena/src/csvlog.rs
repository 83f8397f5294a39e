//! The per-game CSV row and an atomic writer for any row type.
//!
//! Files are never left half-written: rows go to a temporary file in the
//! same directory, which is synced and then renamed over the target.
//! Appending copies the existing file into the temporary one first, so a
//! trainer that appends evaluation games after every generation (with its own
//! row type: these columns plus `generation`) gets the same guarantee.

use crate::ArenaError;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One finished game, as one CSV row. `moves` holds the whole game from the
/// variant's start position (opening plies included) in docs/rules.md notation,
/// so `halatafl replay` can replay it; `opening_moves` is its random prefix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRow {
    /// 1-based game number, in game order.
    pub game: usize,
    /// Index of the opening; each opening is played once with each agent on each side.
    pub opening: usize,
    /// The random opening plies (empty without `--openings`).
    pub opening_moves: String,
    /// Spec of the agent playing the foxes.
    pub foxes: String,
    /// Spec of the agent playing the geese.
    pub geese: String,
    /// `foxes`, `geese` or `draw`.
    pub result: String,
    /// The end rule: `pen-filled`, `no-moves`, `fewer-than-nine`, ...
    pub reason: String,
    /// Plies in the whole game, opening included.
    pub plies: usize,
    pub moves: String,
    /// Thinking time of the foxes' agent over the game.
    pub foxes_seconds: f64,
    pub geese_seconds: f64,
    /// The game's seed (agent seeds are derived from it).
    pub seed: u64,
    /// The variant, as `Variant`'s Display (`two-foxes`, `classic geese=13`).
    pub variant: String,
}

impl GameRow {
    /// The row of a finished game: `start` is where it began (its moves are
    /// the opening), `game` the whole game; the outcome is read from it.
    #[allow(clippy::too_many_arguments)]
    pub fn from_game(
        number: usize,
        opening: usize,
        start: &halatafl_rules::Game,
        game: &halatafl_rules::Game,
        foxes: String,
        geese: String,
        seconds: [f64; 2],
        seed: u64,
    ) -> GameRow {
        let outcome = game.outcome().expect("a row is made for a finished game");
        GameRow {
            game: number,
            opening,
            opening_moves: start.moves_text(),
            foxes,
            geese,
            result: outcome.result_word().to_string(),
            reason: outcome.reason.to_string(),
            plies: game.ply(),
            moves: game.moves_text(),
            foxes_seconds: seconds[0],
            geese_seconds: seconds[1],
            seed,
            variant: start.position().variant().to_string(),
        }
    }

    /// Moves `side` chose in this game: the foxes play the even plies (they
    /// move first), the geese the odd ones; the random opening plies are
    /// nobody's.
    pub fn moves_by(&self, side: halatafl_rules::Side) -> usize {
        let opening = self.opening_plies().min(self.plies);
        let foxes_total = self.plies.div_ceil(2);
        let foxes_opening = opening.div_ceil(2);
        match side {
            halatafl_rules::Side::Foxes => foxes_total - foxes_opening,
            halatafl_rules::Side::Geese => (self.plies - foxes_total) - (opening - foxes_opening),
        }
    }

    /// Plies of the random opening that starts `moves`.
    pub fn opening_plies(&self) -> usize {
        self.opening_moves.split_whitespace().count()
    }

    /// Thinking time of the agent that played `side`.
    pub fn seconds_of(&self, side: halatafl_rules::Side) -> f64 {
        match side {
            halatafl_rules::Side::Foxes => self.foxes_seconds,
            halatafl_rules::Side::Geese => self.geese_seconds,
        }
    }

    /// What a reader checks beyond the columns' types: the result, the end
    /// reason and the variant are words halatafl writes, the result fits
    /// the reason (a draw by repetition or the fifty-move rule, a win
    /// otherwise), and the thinking times are finite and not negative.
    pub fn check(&self) -> Result<(), String> {
        let reason: halatafl_rules::EndReason =
            self.reason.parse().map_err(|e| format!("reason: {e}"))?;
        let draw_reason = matches!(
            reason,
            halatafl_rules::EndReason::Threefold | halatafl_rules::EndReason::FiftyMoves
        );
        match (self.result.as_str(), draw_reason) {
            ("draw", true) | ("foxes" | "geese", false) => {}
            ("draw" | "foxes" | "geese", _) => {
                return Err(format!(
                    "result `{}` cannot end by `{}`",
                    self.result, self.reason
                ))
            }
            (other, _) => {
                return Err(format!(
                    "result `{}`: expected `foxes`, `geese` or `draw`",
                    halatafl_rules::excerpt(other, None)
                ))
            }
        }
        self.variant
            .parse::<halatafl_rules::Variant>()
            .map_err(|e| {
                format!(
                    "variant `{}`: {e}",
                    halatafl_rules::excerpt(&self.variant, None)
                )
            })?;
        for (column, seconds) in [
            ("foxes_seconds", self.foxes_seconds),
            ("geese_seconds", self.geese_seconds),
        ] {
            if !(seconds.is_finite() && seconds >= 0.0) {
                return Err(format!(
                    "{column} {seconds}: expected a finite number of seconds, 0 or more"
                ));
            }
        }
        Ok(())
    }

    /// The CSV header, in column order.
    pub const COLUMNS: [&'static str; 13] = [
        "game",
        "opening",
        "opening_moves",
        "foxes",
        "geese",
        "result",
        "reason",
        "plies",
        "moves",
        "foxes_seconds",
        "geese_seconds",
        "seed",
        "variant",
    ];
}

/// Thinking time summed over games and the moves it was spent on (the random
/// opening plies are nobody's), for time per move: "equal time" comparisons
/// read it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThinkingTime {
    pub seconds: f64,
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

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out.csv".into());
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
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

/// Where a write to `path` must land: a symbolic link is followed to its
/// target (which the link keeps pointing at once the target is replaced),
/// and anything there that is not a regular file (a directory, a FIFO, a
/// device) is refused, because renaming over it would replace it.
pub fn write_target(path: &Path) -> Result<PathBuf, ArenaError> {
    let mut target = path.to_path_buf();
    // A bounded walk, as the kernel bounds link chains (ELOOP).
    for _ in 0..40 {
        let meta = match fs::symlink_metadata(&target) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(target),
            Err(e) => return Err(io_error(&target, e)),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let link = fs::read_link(&target).map_err(|e| io_error(&target, e))?;
            target = match target.parent() {
                Some(dir) if link.is_relative() => dir.join(link),
                _ => link,
            };
            continue;
        }
        if kind.is_file() {
            return Ok(target);
        }
        let what = if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(ArenaError::NotAFile {
            path: path.display().to_string(),
            what: if target == path {
                what.to_string()
            } else {
                format!("a link to {}, which is {what}", target.display())
            },
        });
    }
    Err(ArenaError::NotAFile {
        path: path.display().to_string(),
        what: "a chain of more than 40 symbolic links".into(),
    })
}

/// Whether `a` and `b` name the same file, compared as files rather than
/// strings: `x.csv`, `./x.csv`, `dir/../x.csv`, a hard link and a symbolic
/// link to it are all the same file. Paths that do not exist yet are the
/// same when they would be created at the same place (their directories
/// resolved). Used to refuse an output that would overwrite an input or
/// another output of one command.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) {
        return ma.dev() == mb.dev() && ma.ino() == mb.ino();
    }
    // At least one does not exist: where would each be created?
    let resolved = |p: &Path| -> Option<PathBuf> {
        let target = write_target(p).ok()?;
        if let Ok(full) = fs::canonicalize(&target) {
            return Some(full);
        }
        let name = target.file_name()?;
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some(fs::canonicalize(dir).ok()?.join(name))
    };
    match (resolved(a), resolved(b)) {
        (Some(ra), Some(rb)) => ra == rb,
        _ => a == b,
    }
}

fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<(), ArenaError> {
    let path = &write_target(path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    let temp = temp_path(path);
    let result = (|| {
        let mut f = fs::File::create(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.map_err(|e| io_error(path, e))
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
