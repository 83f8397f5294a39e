//! Test suites: positions with their proven value and the moves that keep
//! it, one CSV row each (`data/suites/two-foxes.csv`), as `halatafl solve
//! --from-games` writes them and `halatafl accuracy` reads them.
//!
//! Suites from the solved classic game (`--method retro`, the tables of
//! [`crate::retro`]) also give every legal move's exact value, the game
//! stage the position was met in and its difficulty (how many moves keep
//! its value), as AlphaZero.jl's Connect Four benchmark does with Pascal
//! Pons's test sets: an agent's *error rate* is the share of positions
//! where it plays a move whose exact value is strictly worse than the
//! best move's.

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
    /// Where in its source game the position was met: `beginning`, `middle`
    /// or `end` (thirds of the game's plies); empty in suites built without
    /// exact move values.
    #[serde(default)]
    pub stage: String,
    /// `easy` (more than half the legal moves keep the value), `medium`, or
    /// `hard` (exactly one does, or at most a quarter); empty in suites
    /// built without exact move values.
    #[serde(default)]
    pub difficulty: String,
    /// Every legal move with the exact value of the position it leads to,
    /// as `move=value` (`d4-c4=foxes`), space-separated; empty in suites
    /// built without them.
    #[serde(default)]
    pub move_values: String,
}

/// Exact values read from solved tables: what a suite row with every
/// move's value needs.
pub trait ExactValues {
    /// The tables' error type.
    type Error: std::error::Error + Send + Sync + 'static;
    /// The value of `position` (no history).
    fn exact_value(&self, position: &Position) -> Result<Value, Self::Error>;
    /// Every legal move of `position` with the exact value of the position
    /// it leads to, in the rules engine's move order.
    fn exact_move_values(&self, position: &Position) -> Result<Vec<(Move, Value)>, Self::Error>;
}

/// `beginning`, `middle` or `end`: the third of a game of `plies` plies in
/// which ply `ply` lies.
pub fn game_stage(ply: usize, plies: usize) -> &'static str {
    let plies = plies.max(1);
    match 3 * ply / plies {
        0 => "beginning",
        1 => "middle",
        _ => "end",
    }
}

/// `easy` (more than half of `legal` moves keep the value), `hard` (exactly
/// one, or at most a quarter, do) or `medium`.
pub fn difficulty(keeping: usize, legal: usize) -> &'static str {
    if keeping == 1 || 4 * keeping <= legal {
        "hard"
    } else if 2 * keeping > legal {
        "easy"
    } else {
        "medium"
    }
}

/// Why [`exact_row`] gave no row.
#[derive(Debug, Error)]
pub enum ExactRowError<E: std::error::Error + 'static> {
    /// The tables cannot answer the position or a move (a quiet counter
    /// beyond what they hold, a layer they dropped).
    #[error("{fen}: {source}")]
    Tables {
        /// The position.
        fen: String,
        /// The tables' error.
        source: E,
    },
    /// The position's value is not the best of its moves' values.
    #[error("{fen}: the tables give the position {value} but its best move {best:?} (for the side to move): inconsistent tables")]
    Inconsistent {
        /// The position.
        fen: String,
        /// The position's value in the tables.
        value: Value,
        /// The best move value for the side to move (+1, 0, -1).
        best: Option<i32>,
    },
}

/// A suite row for `position` (met at ply `ply` of game `game`, which
/// lasted `plies` plies) from exact tables: its value, every move's value
/// and the moves that keep it. The position's value must be the best of its
/// moves' for the side to move (an error otherwise: the tables would be
/// inconsistent). `None` for a position without a wrong move (every legal
/// move keeps the value), which tests nothing.
pub fn exact_row<T: ExactValues>(
    tables: &T,
    position: &Position,
    game: usize,
    ply: usize,
    plies: usize,
) -> Result<Option<SuiteRow>, ExactRowError<T::Error>> {
    let fen = position.fen();
    let tables_error = |source| ExactRowError::Tables {
        fen: fen.clone(),
        source,
    };
    let value = tables.exact_value(position).map_err(tables_error)?;
    let moves = tables.exact_move_values(position).map_err(tables_error)?;
    let mover = position.side();
    let best = moves.iter().map(|(_, v)| v.for_side(mover)).max();
    if best != Some(value.for_side(mover)) {
        return Err(ExactRowError::Inconsistent { fen, value, best });
    }
    let keeping: Vec<&Move> = moves
        .iter()
        .filter(|(_, v)| *v == value)
        .map(|(m, _)| m)
        .collect();
    if keeping.len() == moves.len() {
        return Ok(None);
    }
    let join = |words: Vec<String>| words.join(" ");
    Ok(Some(SuiteRow {
        fen,
        variant: position.variant().to_string(),
        value: value.word().to_string(),
        keeping_moves: join(keeping.iter().map(|m| m.to_string()).collect()),
        legal_moves: moves.len(),
        nodes: 0,
        geese: position.geese().count(),
        ply,
        game,
        stage: game_stage(ply, plies).to_string(),
        difficulty: difficulty(keeping.len(), moves.len()).to_string(),
        move_values: join(
            moves
                .iter()
                .map(|(m, v)| format!("{m}={}", v.word()))
                .collect(),
        ),
    }))
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
    /// Every legal move with its exact value, where the row gives them
    /// (empty otherwise).
    pub move_values: Vec<(Move, Value)>,
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
    let move_values = row
        .move_values
        .split_whitespace()
        .map(|item| {
            let (text, word) = item
                .split_once('=')
                .ok_or_else(|| format!("move value `{item}`: expected MOVE=VALUE"))?;
            let m = position
                .parse_move(text)
                .map_err(|e| format!("move value `{item}`: {e}"))?;
            let v = Value::parse(word).ok_or_else(|| {
                format!("move value `{item}`: expected `foxes`, `geese` or `draw` after `=`")
            })?;
            Ok((m, v))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if !move_values.is_empty() {
        let legal = position.legal_moves();
        if move_values.len() != legal.len()
            || legal
                .iter()
                .any(|m| !move_values.iter().any(|(n, _)| n == m))
        {
            return Err(format!(
                "move values: {} given for {} legal moves; each legal move needs exactly one",
                move_values.len(),
                legal.len()
            ));
        }
        let mut from_values: Vec<Move> = move_values
            .iter()
            .filter(|(_, v)| *v == value)
            .map(|(m, _)| *m)
            .collect();
        let mut given = keeping.clone();
        from_values.sort_by_key(|m| m.to_string());
        given.sort_by_key(|m| m.to_string());
        let best = move_values
            .iter()
            .map(|(_, v)| v.for_side(position.side()))
            .max();
        if from_values != given || best != Some(value.for_side(position.side())) {
            return Err(format!(
                "move values do not agree with value `{}` and the keeping moves",
                row.value
            ));
        }
    }
    if !["", "beginning", "middle", "end"].contains(&row.stage.as_str()) {
        return Err(format!(
            "stage `{}`: expected beginning, middle or end",
            row.stage
        ));
    }
    if !["", "easy", "medium", "hard"].contains(&row.difficulty.as_str()) {
        return Err(format!(
            "difficulty `{}`: expected easy, medium or hard",
            row.difficulty
        ));
    }
    Ok(SuiteEntry {
        position,
        value,
        keeping,
        move_values,
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
    fn stages_are_thirds_of_the_game_and_difficulty_counts_keeping_moves() {
        let stages: Vec<&str> = (0..9).map(|ply| game_stage(ply, 9)).collect();
        assert_eq!(stages[..3], ["beginning"; 3]);
        assert_eq!(stages[3..6], ["middle"; 3]);
        assert_eq!(stages[6..], ["end"; 3]);
        assert_eq!(difficulty(1, 2), "hard");
        assert_eq!(difficulty(2, 8), "hard");
        assert_eq!(difficulty(3, 8), "medium");
        assert_eq!(difficulty(4, 8), "medium");
        assert_eq!(difficulty(5, 8), "easy");
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
