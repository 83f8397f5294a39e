//! Typed errors. Every message says what is wrong and where.

use thiserror::Error;

/// A position string that cannot be read, or a position a variant forbids.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PositionError {
    /// Not two or three whitespace-separated fields.
    #[error("expected `<placement> <side> [<quiet>]`, found {found} space-separated fields")]
    Fields {
        /// Fields found.
        found: usize,
    },
    /// The placement does not have the board's seven rows.
    #[error("the placement has {found} rows separated by `/`, expected 7 (rows 7 down to 1)")]
    RowCount {
        /// Rows found.
        found: usize,
    },
    /// A row with the wrong number of points (3 in the arms, 7 across the
    /// middle).
    #[error("row {row} (starting at character {column}) has {found} points, expected {expected}")]
    RowLength {
        /// The board row, 1 to 7.
        row: i32,
        /// Characters in the row.
        found: usize,
        /// Points the row has on the board.
        expected: usize,
        /// Where the row starts in the string, from 1.
        column: usize,
    },
    /// A character that is not a piece or an empty point.
    #[error("row {row}, character {column} (point {point}): `{ch}` is not F (fox), G (goose) or . (empty)")]
    BadPiece {
        /// The board row, 1 to 7.
        row: i32,
        /// The point the character stands for, in coordinates (`d4`).
        point: String,
        /// Its place in the string, from 1.
        column: usize,
        /// The character.
        ch: char,
    },
    /// The side field is not `f` or `g`.
    #[error("side to move `{found}` at character {column}: expected `f` (foxes) or `g` (geese)")]
    BadSide {
        /// The field as written.
        found: String,
        /// Its place in the string, from 1.
        column: usize,
    },
    /// The quiet-ply counter is not a `u16`.
    #[error("quiet-ply counter `{found}` at character {column}: expected a whole number from 0 to 65535")]
    BadQuiet {
        /// The field as written.
        found: String,
        /// Its place in the string, from 1.
        column: usize,
    },
    /// Foxes are never captured, so a variant's positions all have its
    /// number of foxes.
    #[error("{} on the board; {variant} is played with exactly {expected}", foxes(*.found))]
    FoxCount {
        /// Foxes on the board.
        found: u32,
        /// Foxes the variant has.
        expected: u32,
        /// The variant's name.
        variant: &'static str,
    },
    /// More geese than the variant starts with: no game reaches it.
    #[error("{found} geese on the board; {variant} starts with {most}, and geese are never added")]
    TooManyGeese {
        /// Geese on the board.
        found: u32,
        /// Geese at the variant's start.
        most: u32,
        /// The variant's name.
        variant: &'static str,
    },
    /// A point is given both pieces.
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
/// `QUOTE_CHARS` characters; otherwise about that many around character
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
    /// The text is not a move in docs/rules.md notation.
    #[error("malformed move `{text}` at character {column}: {why}")]
    Syntax {
        /// The move string (quoted as an excerpt when long).
        text: String,
        /// Where it stops making sense, from 1.
        column: usize,
        /// What was expected there.
        why: String,
    },
    /// A well-formed move that the position does not allow.
    #[error("illegal move `{text}`: {why}")]
    Illegal {
        /// The move as written.
        text: String,
        /// Why, with the legal moves from the same point where there are
        /// some, so the user sees what was meant.
        why: String,
    },
}

/// A move that a [`crate::Game`] cannot take, with the ply it was tried at.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum GameError {
    /// The move does not parse or is not legal.
    #[error("ply {ply}: {error}")]
    Move {
        /// The ply the move would have been, from 1.
        ply: usize,
        /// What is wrong with it.
        error: MoveError,
    },
    /// The game has already ended by one of the end rules, so no move is
    /// legal, not even one the position alone would allow.
    #[error("ply {ply}: move `{text}` played after the game ended: {outcome}")]
    Over {
        /// The ply the move would have been, from 1.
        ply: usize,
        /// The move as given.
        text: String,
        /// How the game ended.
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
