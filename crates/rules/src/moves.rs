//! Moves: a step or a whole jump chain, as one small `Copy` value.

use crate::bitboard::Bitboard;
use crate::geometry::Direction;
use crate::point::Point;
use smallvec::SmallVec;
use std::fmt;

/// The side to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The foxes, who move first.
    Foxes,
    /// The geese.
    Geese,
}

impl Side {
    /// The opponent.
    #[inline]
    pub const fn other(self) -> Side {
        match self {
            Side::Foxes => Side::Geese,
            Side::Geese => Side::Foxes,
        }
    }

    /// `foxes` or `geese`: the word of CSV files and `result:` lines.
    pub const fn name(self) -> &'static str {
        match self {
            Side::Foxes => "foxes",
            Side::Geese => "geese",
        }
    }

    /// The letter of position strings: `f` or `g`.
    pub const fn letter(self) -> char {
        match self {
            Side::Foxes => 'f',
            Side::Geese => 'g',
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Side {
    type Err = String;
    fn from_str(s: &str) -> Result<Side, String> {
        match s {
            "foxes" | "fox" | "f" => Ok(Side::Foxes),
            "geese" | "goose" | "g" => Ok(Side::Geese),
            other => Err(format!(
                "unknown side `{other}`: expected `foxes` or `geese`"
            )),
        }
    }
}

/// Longest chain a [`Move`] can hold: 3 bits of direction per jump in a `u64`.
/// A chain captures one goose per jump and there are at most 31 geese, but a
/// chain needs an empty landing point per jump on a 33-point board, and the
/// longest chain possible here is far below 21.
pub const MAX_JUMPS: usize = 21;

/// A legal-move candidate: a step (`jumps == 0`) or a jump chain. Which piece
/// moves follows from the side to move. The captured set is kept so that
/// playing a move costs a few XORs.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    from: Point,
    to: Point,
    jumps: u8,
    /// Direction of jump `i` in bits `3i..3i+3`; for a step, its direction.
    dirs: u64,
    captured: Bitboard,
}

impl Move {
    #[inline]
    pub(crate) fn step(from: Point, to: Point) -> Move {
        Move {
            from,
            to,
            jumps: 0,
            dirs: 0,
            captured: Bitboard::EMPTY,
        }
    }

    #[inline]
    pub(crate) fn chain(from: Point, to: Point, jumps: u8, dirs: u64, captured: Bitboard) -> Move {
        Move {
            from,
            to,
            jumps,
            dirs,
            captured,
        }
    }

    /// Where the moving piece starts.
    #[inline]
    pub fn from(self) -> Point {
        self.from
    }

    /// Where the moving piece ends.
    #[inline]
    pub fn to(self) -> Point {
        self.to
    }

    /// Number of jumps (captures); 0 for a step.
    #[inline]
    pub fn jumps(self) -> usize {
        self.jumps as usize
    }

    /// Whether the move is a jump chain (`jumps() > 0`).
    #[inline]
    pub fn is_capture(self) -> bool {
        self.jumps > 0
    }

    /// The geese this move captures.
    #[inline]
    pub fn captured(self) -> Bitboard {
        self.captured
    }

    /// Direction of the `i`-th jump of a chain.
    #[inline]
    pub fn jump_direction(self, i: usize) -> Direction {
        Direction::from_index(((self.dirs >> (3 * i)) & 7) as u8)
    }

    /// Landing points of a chain in order (empty for a step).
    pub fn landings(self) -> impl Iterator<Item = Point> {
        let mut cur = self.from.index() as i32;
        (0..self.jumps()).map(move |i| {
            cur += 2 * self.jump_direction(i).delta();
            Point::from_index(cur as u8).expect("chains stay on the board")
        })
    }

    /// The same move in the left-right mirror.
    pub fn mirror(self) -> Move {
        let mut dirs = 0u64;
        for i in 0..self.jumps() {
            dirs |= (self.jump_direction(i).mirror() as u64) << (3 * i);
        }
        Move {
            from: self.from.mirror(),
            to: self.to.mirror(),
            jumps: self.jumps,
            dirs,
            captured: self.captured.mirror(),
        }
    }
}

/// docs/rules.md notation: `c7-d6` for a step, `c5xe5xe3` for a chain.
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.from)?;
        if self.jumps == 0 {
            write!(f, "-{}", self.to)
        } else {
            for p in self.landings() {
                write!(f, "x{p}")?;
            }
            Ok(())
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Move lists live on the stack in the usual case.
pub type MoveList = SmallVec<[Move; 64]>;

/// A move string split into points, before it is checked against a position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MoveText {
    /// The point the move starts from.
    pub from: Point,
    /// The destination of a step, or every landing point of a chain.
    pub path: Vec<Point>,
    /// Written with `x` (a jump chain) rather than `-` (a step).
    pub is_jump: bool,
}

impl MoveText {
    /// Parses `from-to` or `from x land x land ...`. The error gives the
    /// 1-based character where the text stops making sense.
    pub fn parse(text: &str) -> Result<MoveText, (usize, String)> {
        if text.is_empty() {
            return Err((1, "empty move".into()));
        }
        if !text.is_ascii() {
            let col = text
                .char_indices()
                .position(|(_, c)| !c.is_ascii())
                .unwrap_or(0)
                + 1;
            return Err((col, "unexpected non-ASCII character".into()));
        }
        let point_at = |start: usize| -> Result<Point, (usize, String)> {
            let name = text.get(start..start + 2).unwrap_or(&text[start..]);
            Point::parse(name).ok_or_else(|| {
                (
                    start + 1,
                    format!(
                        "`{name}` is not a point of the board (files a-g, rows 1-7, no corners)"
                    ),
                )
            })
        };
        let from = point_at(0)?;
        let mut path = Vec::new();
        let mut pos = 2;
        let mut sep = None;
        while pos < text.len() {
            let c = text.as_bytes()[pos] as char;
            match (sep, c) {
                (None, '-' | 'x') => sep = Some(c),
                (Some('x'), 'x') => {}
                (Some(s), c) => {
                    return Err((pos + 1, format!("expected `{s}`, found `{c}`")));
                }
                (None, c) => return Err((pos + 1, format!("expected `-` or `x`, found `{c}`"))),
            }
            if sep == Some('-') && !path.is_empty() {
                return Err((pos + 1, "a step has exactly one destination".into()));
            }
            path.push(point_at(pos + 1)?);
            pos += 3;
        }
        if path.is_empty() {
            return Err((3, "missing `-` or `x` and a destination".into()));
        }
        Ok(MoveText {
            from,
            path,
            is_jump: sep == Some('x'),
        })
    }

    /// Whether `m` is the move this text names.
    pub fn matches(&self, m: Move) -> bool {
        if m.from() != self.from || m.is_capture() != self.is_jump {
            return false;
        }
        if self.is_jump {
            m.jumps() == self.path.len() && m.landings().eq(self.path.iter().copied())
        } else {
            m.to() == self.path[0]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_text() {
        let t = MoveText::parse("c5xe5xe3xc3xc5").unwrap();
        assert!(t.is_jump);
        assert_eq!(t.path.len(), 4);
        assert_eq!(MoveText::parse("c7-d6").unwrap().path.len(), 1);
        assert_eq!(MoveText::parse("c7").unwrap_err().0, 3);
        assert_eq!(MoveText::parse("c7-d6-d5").unwrap_err().0, 6);
        assert_eq!(MoveText::parse("c7xh6").unwrap_err().0, 4);
        assert_eq!(MoveText::parse("a1-a2").unwrap_err().0, 1);
        assert_eq!(MoveText::parse("c7xe5-e3").unwrap_err().0, 6);
        assert_eq!(MoveText::parse("c7+d6").unwrap_err().0, 3);
        assert!(MoveText::parse("c7-").is_err());
    }
}
