//! Position strings, parsed into an unvalidated [`Setup`] (shakmaty's way); a
//! [`crate::Position`] is made from it once the variant is known.

use crate::bitboard::Bitboard;
use crate::error::PositionError;
use crate::moves::Side;
use crate::point::Point;
use std::fmt;

/// Rows of a placement, from row 7 down to row 1: (row number, first file, width).
const ROWS: [(i32, i32, usize); 7] = [
    (7, 2, 3),
    (6, 2, 3),
    (5, 0, 7),
    (4, 0, 7),
    (3, 0, 7),
    (2, 2, 3),
    (1, 2, 3),
];

/// What a position string says, before any rule of a variant is checked.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Setup {
    /// Points marked `F`.
    pub foxes: Bitboard,
    /// Points marked `G`.
    pub geese: Bitboard,
    /// The side to move (`f` or `g`).
    pub side: Side,
    /// The quiet-ply counter of the fifty-move rule (0 when left out).
    pub quiet: u16,
}

impl Setup {
    /// Parses `<placement> <side> [<quiet>]`. Errors name the row and the
    /// 1-based character of the whole string where the problem is.
    pub fn parse(text: &str) -> Result<Setup, PositionError> {
        // Fields with their 1-based starting column, counted in characters
        // (not bytes: a non-ASCII space before a field must not shift it).
        let mut fields = Vec::new();
        let mut start = None;
        for (i, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    fields.push((text[..s].chars().count() + 1, &text[s..i]));
                    start = None;
                }
                _ => {}
            }
        }
        if !(2..=3).contains(&fields.len()) {
            return Err(PositionError::Fields {
                found: fields.len(),
            });
        }
        let (col, placement) = fields[0];
        let rows: Vec<&str> = placement.split('/').collect();
        if rows.len() != 7 {
            return Err(PositionError::RowCount { found: rows.len() });
        }
        let mut foxes = Bitboard::EMPTY;
        let mut geese = Bitboard::EMPTY;
        let mut column = col;
        for (text_row, &(row, first_file, width)) in rows.iter().zip(ROWS.iter()) {
            let found = text_row.chars().count();
            if found != width {
                return Err(PositionError::RowLength {
                    row,
                    found,
                    expected: width,
                    column,
                });
            }
            for (i, ch) in text_row.chars().enumerate() {
                let p =
                    Point::new(first_file + i as i32, row - 1).expect("row table is on the board");
                match ch {
                    'F' => foxes = foxes.with(p),
                    'G' => geese = geese.with(p),
                    '.' => {}
                    _ => {
                        return Err(PositionError::BadPiece {
                            row,
                            point: p.to_string(),
                            column: column + i,
                            ch,
                        })
                    }
                }
            }
            column += found + 1;
        }
        let (col, side) = fields[1];
        let side = match side {
            "f" => Side::Foxes,
            "g" => Side::Geese,
            _ => {
                return Err(PositionError::BadSide {
                    found: crate::error::excerpt(side, None),
                    column: col,
                })
            }
        };
        let quiet = match fields.get(2) {
            None => 0,
            Some(&(col, q)) => q.parse::<u16>().map_err(|_| PositionError::BadQuiet {
                found: crate::error::excerpt(q, None),
                column: col,
            })?,
        };
        Ok(Setup {
            foxes,
            geese,
            side,
            quiet,
        })
    }
}

/// Writes the placement field for the given pieces.
pub(crate) fn write_placement(
    f: &mut fmt::Formatter<'_>,
    foxes: Bitboard,
    geese: Bitboard,
) -> fmt::Result {
    for (i, &(row, first_file, width)) in ROWS.iter().enumerate() {
        if i > 0 {
            f.write_str("/")?;
        }
        for k in 0..width {
            let p = Point::new(first_file + k as i32, row - 1).expect("row table is on the board");
            let c = if foxes.contains(p) {
                'F'
            } else if geese.contains(p) {
                'G'
            } else {
                '.'
            };
            write!(f, "{c}")?;
        }
    }
    Ok(())
}
