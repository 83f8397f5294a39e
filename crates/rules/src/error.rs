//! Typed errors. Every message says what is wrong and where.

use thiserror::Error;

/// A position string that cannot be read, or a position a variant forbids.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PositionError {
    #[error("expected `<placement> <side> [<quiet>]`, found {found} space-separated fields")]
    Fields { found: usize },
    #[error("the placement has {found} rows separated by `/`, expected 7 (rows 7 down to 1)")]
    RowCount { found: usize },
    #[error("row {row} (starting at character {column}) has {found} points, expected {expected}")]
    RowLength {
        row: i32,
        found: usize,
        expected: usize,
        column: usize,
    },
    #[error("row {row}, character {column} (point {point}): `{ch}` is not F (fox), G (goose) or . (empty)")]
    BadPiece {
        row: i32,
        point: String,
        column: usize,
        ch: char,
    },
    #[error("side to move `{found}` at character {column}: expected `f` (foxes) or `g` (geese)")]
    BadSide { found: String, column: usize },
    #[error("quiet-ply counter `{found}` at character {column}: expected a whole number from 0 to 65535")]
    BadQuiet { found: String, column: usize },
    #[error("{} on the board; {variant} is played with exactly {expected}", foxes(*.found))]
    FoxCount {
        found: u32,
        expected: u32,
        variant: &'static str,
    },
    #[error("{found} geese on the board; {variant} starts with {most}, and geese are never added")]
    TooManyGeese {
        found: u32,
        most: u32,
        variant: &'static str,
    },
    #[error("a point holds both a fox and a goose")]
    Overlap,
}

impl PositionError {
    /// The character (1-based) of the position string where the error is,
    /// where one place is to blame.
    pub fn column(&self) -> Option<usize> {
        match self {
            PositionError::RowLength { column, .. }
            | PositionError::BadPiece { column, .. }
            | PositionError::BadSide { column, .. }
            | PositionError::BadQuiet { column, .. } => Some(*column),
            _ => None,
        }
    }
}

/// The most characters of user input a message quotes.
pub const QUOTE_CHARS: usize = 60;

/// `text` as an error message quotes it: whole when it is at most
/// [`QUOTE_CHARS`] characters; otherwise about that many around character
/// `column` (1-based; the start when `None`), with `...` where text was cut
/// and the whole length, so a 100 KB input gives a short line that still
/// shows the place of the error.
pub fn excerpt(text: &str, column: Option<usize>) -> String {
    let total = text.chars().count();
    if total <= QUOTE_CHARS {
        return text.to_string();
    }
    let at = column.unwrap_or(1).clamp(1, total) - 1;
    let first = at.saturating_sub(QUOTE_CHARS / 2).min(total - QUOTE_CHARS);
    let shown: String = text.chars().skip(first).take(QUOTE_CHARS).collect();
    format!(
        "{}{shown}{} ({total} characters)",
        if first > 0 { "..." } else { "" },
        if first + QUOTE_CHARS < total {
            "..."
        } else {
            ""
        }
    )
}

/// A move string that cannot be read, or a move that is not legal.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum MoveError {
    #[error("malformed move `{text}` at character {column}: {why}")]
    Syntax {
        text: String,
        column: usize,
        why: String,
    },
    #[error("illegal move `{text}`: {why}")]
    Illegal { text: String, why: String },
}

/// A move that a [`crate::Game`] cannot take, with the ply it was tried at.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum GameError {
    #[error("ply {ply}: {error}")]
    Move { ply: usize, error: MoveError },
    #[error("ply {ply}: move `{text}` played after the game ended: {outcome}")]
    Over {
        ply: usize,
        text: String,
        outcome: crate::Outcome,
    },
}

/// `1 fox`, `2 foxes`: the count of foxes in words.
fn foxes(n: u32) -> String {
    if n == 1 {
        "1 fox".into()
    } else {
        format!("{n} foxes")
    }
}
