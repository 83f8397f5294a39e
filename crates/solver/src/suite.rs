//! Test suites: positions with their proven value and the moves that keep
//! it, one CSV row each (`data/suites/two-foxes.csv`), as `halatafl solve
//! --from-games` writes them and `halatafl accuracy` reads them.

use crate::value::Value;
use crate::{SearchOutcome, Solver};
use halatafl_rules::{Move, Position, Variant};
use serde::{Deserialize, Serialize};
use std::path::Path;
use thiserror::Error;

/// One solved position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteRow {
    /// The position string (docs/rules.md), quiet counter included; no history.
    pub fen: String,
    /// The variant, as `Variant`'s Display (`two-foxes`, `classic geese=13`).
    pub variant: String,
    /// `foxes`, `geese` or `draw`: who wins with best play.
    pub value: String,
    /// Every legal move whose position (with no history) has the same value,
    /// space-separated; for a lost position, every legal move.
    pub keeping_moves: String,
    /// Legal moves in the position.
    pub legal_moves: usize,
    /// Nodes spent proving the value and the value of every move.
    pub nodes: u64,
    /// Geese on the board (the game stage).
    pub geese: u32,
    /// The ply of the source game the position was taken from.
    pub ply: usize,
    /// The source game's number in its CSV.
    pub game: usize,
}

/// A suite file that cannot be used, with the file and line.
#[derive(Debug, Error)]
pub enum SuiteError {
    /// The file cannot be opened or read (or is a directory).
    #[error("{path}: {source}")]
    Io {
        /// The suite file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A row that does not parse or does not hold together (position,
    /// variant, value, keeping moves).
    #[error("{path}, line {line}: {why}")]
    Row {
        /// The suite file.
        path: String,
        /// The row's line (1 is the header).
        line: u64,
        /// What is wrong with it.
        why: String,
    },
    /// A suite without rows: an accuracy over no positions means nothing.
    #[error("{path}: no positions in the suite")]
    Empty {
        /// The suite file.
        path: String,
    },
}

/// A suite row, checked: the position parses under its variant, the value
/// is a value, and every keeping move is legal there.
#[derive(Clone, Debug)]
pub struct SuiteEntry {
    /// The row's position, parsed under its variant.
    pub position: Position,
    /// The row's value.
    pub value: Value,
    /// The keeping moves, each legal in `position`.
    pub keeping: Vec<Move>,
    /// The row as read.
    pub row: SuiteRow,
    /// Line of the file (1 is the header).
    pub line: u64,
}

/// Reads and checks a suite file.
pub fn read_suite(path: &Path) -> Result<Vec<SuiteEntry>, SuiteError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| SuiteError::Io {
        path: name.clone(),
        source,
    })?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(SuiteError::Io {
            path: name,
            source: std::io::Error::other("is a directory"),
        });
    }
    parse_suite(&name, std::io::BufReader::new(file))
}

/// [`read_suite`] from any reader; `name` names it in errors.
pub fn parse_suite(name: &str, input: impl std::io::Read) -> Result<Vec<SuiteEntry>, SuiteError> {
    let name = name.to_string();
    let mut reader = csv::Reader::from_reader(input);
    let mut out = Vec::new();
    for record in reader.deserialize::<SuiteRow>() {
        let row_error = |line: u64, why: String| SuiteError::Row {
            path: name.clone(),
            line,
            why,
        };
        let row = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            let why = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => match err.field() {
                    Some(i) => format!("column {}: {}", i + 1, err.kind()),
                    None => err.kind().to_string(),
                },
                _ => e.to_string(),
            };
            row_error(line, why)
        })?;
        let line = out.len() as u64 + 2;
        let entry = check_row(row, line).map_err(|why| row_error(line, why))?;
        out.push(entry);
    }
    if out.is_empty() {
        return Err(SuiteError::Empty { path: name });
    }
    Ok(out)
}

fn check_row(row: SuiteRow, line: u64) -> Result<SuiteEntry, String> {
    let variant: Variant = row
        .variant
        .parse()
        .map_err(|e| format!("variant `{}`: {e}", row.variant))?;
    let position =
        Position::from_fen(&row.fen, variant).map_err(|e| format!("fen `{}`: {e}", row.fen))?;
    // A finished position has no move to judge: an agent asked for one
    // would have none to give.
    if let Some(outcome) = halatafl_rules::Game::new(position).outcome() {
        return Err(format!(
            "fen `{}`: the game is already over there ({}, {}); a suite holds positions with a move to make",
            row.fen,
            outcome.result_word(),
            outcome.reason
        ));
    }
    let value = Value::parse(&row.value)
        .ok_or_else(|| format!("value `{}`: expected `foxes`, `geese` or `draw`", row.value))?;
    let keeping = row
        .keeping_moves
        .split_whitespace()
        .map(|text| {
            position
                .parse_move(text)
                .map_err(|e| format!("keeping move `{text}`: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if keeping.is_empty() {
        return Err("no keeping moves: every row needs at least one".into());
    }
    Ok(SuiteEntry {
        position,
        value,
        keeping,
        row,
        line,
    })
}

/// The moves of `position` that keep `value` (which must be its proven
/// value), each decided by a search of the position it leads to (with no
/// history) within `budget` nodes; `None` when one is not decided. Also
/// returns the nodes spent.
///
/// - The side to move wins: a move keeps the value when the mover still
///   wins after it.
/// - Draw: a move keeps it when the other side does not win after it (the
///   mover cannot win after it, or the position would be a win).
/// - The side to move loses: every move does.
pub fn keeping_moves(
    solver: &mut Solver,
    position: &Position,
    value: Value,
    budget: u64,
) -> (Option<Vec<Move>>, u64) {
    let mover = position.side();
    let moves = position.legal_moves();
    if value == Value::Win(mover.other()) {
        return (Some(moves.to_vec()), 0);
    }
    let (prover, keep_if) = match value {
        Value::Win(_) => (mover, SearchOutcome::Proven),
        Value::Draw => (mover.other(), SearchOutcome::Disproven),
    };
    let mut keeping = Vec::new();
    let mut nodes = 0;
    for m in moves {
        let mut child = *position;
        child.play_unchecked(m);
        let (outcome, _, n) = solver.prove(&child, prover, budget);
        nodes += n;
        if matches!(outcome, SearchOutcome::Unknown { .. }) {
            return (None, nodes);
        }
        if outcome == keep_if {
            keeping.push(m);
        }
    }
    (Some(keeping), nodes)
}

/// The game stage of a position with `geese` geese: one of three equal
/// ranges of goose counts from the variant's start down to the foxes' goal,
/// named like `geese 17-20`, latest stage first when sorted.
pub fn stage(geese: u32, variant: Variant) -> String {
    let top = variant.geese as u32;
    let bottom = variant.geese_needed();
    let width = (top + 1 - bottom).div_ceil(3);
    let geese = geese.clamp(bottom, top);
    let k = (geese - bottom) / width;
    let low = bottom + k * width;
    let high = (low + width - 1).min(top);
    format!("geese {low:02}-{high:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite_file(name: &str, rows: &[(&str, &str)]) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("halatafl-suite-{name}-{}.csv", std::process::id()));
        let mut text =
            "fen,variant,value,keeping_moves,legal_moves,nodes,geese,ply,game\n".to_string();
        for (fen, keeping) in rows {
            text.push_str(&format!("{fen},two-foxes,geese,{keeping},3,10,20,5,1\n"));
        }
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_position_that_is_already_over_is_refused_with_its_line() {
        let start = Position::start(Variant::two_foxes());
        let first = start.legal_moves()[0].to_string();
        let fen = start.fen();
        let good = suite_file("good", &[(&fen, &first)]);
        assert_eq!(read_suite(&good).unwrap().len(), 1);
        std::fs::remove_file(&good).ok();
        // The fifty-move rule (quiet counter 100), and fewer than nine geese.
        for over in [
            "F../.../.....GG/...G..G/.FG.G../G.G/G.G f 100",
            "F.F/.../......./GG...../......./GGG/GGG f 0",
        ] {
            let path = suite_file("over", &[(&fen, &first), (over, "")]);
            let err = read_suite(&path).unwrap_err().to_string();
            assert!(
                err.contains(&format!("{}, line 3", path.display()))
                    && err.contains("already over"),
                "{err}"
            );
            std::fs::remove_file(&path).ok();
        }
    }
}
