//! The lines of the board, as tables built at compile time.
//!
//! Two boards exist: the default one (diagonals only inside unit squares whose four
//! corners are all points, as drawn on paper) and `corner-links`, which also joins
//! the four inner-corner pairs `c6-b5`, `e6-f5`, `b3-c2`, `f3-e2`. Everything the
//! move generator needs is a table lookup: the neighbour in each direction, the
//! jump (over, land) pair in each direction, and for each direction the set of
//! points that have a line leaving that way (so a whole-set shift never wraps).

use crate::bitboard::Bitboard;
use crate::point::{on_cross, Point};

/// One of the eight line directions.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
#[repr(u8)]
pub enum Direction {
    /// Up a file, towards row 7 (and the pen): a goose's forward step.
    North = 0,
    /// Up and towards file g.
    NorthEast = 1,
    /// Along the row towards file g.
    East = 2,
    /// Down and towards file g.
    SouthEast = 3,
    /// Down a file, towards row 1.
    South = 4,
    /// Down and towards file a.
    SouthWest = 5,
    /// Along the row towards file a.
    West = 6,
    /// Up and towards file a.
    NorthWest = 7,
}

impl Direction {
    /// The eight directions clockwise from north, in the order of their
    /// discriminants, so `ALL[d as usize] == d`.
    pub const ALL: [Direction; 8] = [
        Direction::North,
        Direction::NorthEast,
        Direction::East,
        Direction::SouthEast,
        Direction::South,
        Direction::SouthWest,
        Direction::West,
        Direction::NorthWest,
    ];

    /// The direction of index `i` (its discriminant), modulo 8: a move
    /// stores directions in 3 bits.
    #[inline]
    pub const fn from_index(i: u8) -> Direction {
        Direction::ALL[(i & 7) as usize]
    }

    /// (file, row) offset of one step.
    #[inline]
    pub const fn offset(self) -> (i32, i32) {
        match self {
            Direction::North => (0, 1),
            Direction::NorthEast => (1, 1),
            Direction::East => (1, 0),
            Direction::SouthEast => (1, -1),
            Direction::South => (0, -1),
            Direction::SouthWest => (-1, -1),
            Direction::West => (-1, 0),
            Direction::NorthWest => (-1, 1),
        }
    }

    /// Grid-index offset of one step.
    #[inline]
    pub const fn delta(self) -> i32 {
        let (df, dr) = self.offset();
        df + 7 * dr
    }

    /// The direction seen in the left-right mirror.
    #[inline]
    pub const fn mirror(self) -> Direction {
        match self {
            Direction::East => Direction::West,
            Direction::West => Direction::East,
            Direction::NorthEast => Direction::NorthWest,
            Direction::NorthWest => Direction::NorthEast,
            Direction::SouthEast => Direction::SouthWest,
            Direction::SouthWest => Direction::SouthEast,
            d => d,
        }
    }

    /// The direction of a single step or jump from `from` to `to`, if they lie
    /// on one of the eight rays at distance `dist`.
    pub fn between(from: Point, to: Point, dist: i32) -> Option<Direction> {
        let df = to.file() - from.file();
        let dr = to.row() - from.row();
        Direction::ALL
            .into_iter()
            .find(|d| d.offset().0 * dist == df && d.offset().1 * dist == dr)
    }
}

/// Marker for "no point" in the `u8` tables.
pub const NO_POINT: u8 = 64;

/// Lines of one board, indexed `[direction][point index]`.
pub struct Geometry {
    /// Neighbour along a line, or [`NO_POINT`].
    pub neighbour: [[u8; 49]; 8],
    /// All neighbours of a point (where a fox may step).
    pub adjacent: [Bitboard; 49],
    /// Point jumped over and landing point of a jump, or [`NO_POINT`] when the
    /// line does not continue for two steps.
    pub jump_over: [[u8; 49]; 8],
    /// The landing point of the same jump, or [`NO_POINT`].
    pub jump_land: [[u8; 49]; 8],
    /// Points that have a line leaving in each direction.
    pub has_line: [Bitboard; 8],
    /// Points from which some jump exists, per direction (bulk jump detection).
    pub can_jump: [Bitboard; 8],
}

const fn linked(file: i32, row: i32, dir: Direction, corner_links: bool) -> bool {
    let (df, dr) = dir.offset();
    let (f2, r2) = (file + df, row + dr);
    if !on_cross(file, row) || !on_cross(f2, r2) {
        return false;
    }
    if df == 0 || dr == 0 || corner_links {
        return true;
    }
    // A diagonal is drawn only in a unit square whose four corners are points.
    on_cross(file + df, row) && on_cross(file, row + dr)
}

const fn build(corner_links: bool) -> Geometry {
    let mut g = Geometry {
        neighbour: [[NO_POINT; 49]; 8],
        adjacent: [Bitboard::EMPTY; 49],
        jump_over: [[NO_POINT; 49]; 8],
        jump_land: [[NO_POINT; 49]; 8],
        has_line: [Bitboard::EMPTY; 8],
        can_jump: [Bitboard::EMPTY; 8],
    };
    let mut d = 0;
    while d < 8 {
        let dir = Direction::ALL[d];
        let (df, dr) = dir.offset();
        let mut i = 0;
        while i < 49 {
            let (f, r) = ((i % 7) as i32, (i / 7) as i32);
            if linked(f, r, dir, corner_links) {
                let n = ((r + dr) * 7 + f + df) as u8;
                g.neighbour[d][i] = n;
                g.adjacent[i] = Bitboard(g.adjacent[i].0 | (1 << n));
                g.has_line[d] = Bitboard(g.has_line[d].0 | (1 << i));
                if linked(f + df, r + dr, dir, corner_links) {
                    g.jump_over[d][i] = n;
                    g.jump_land[d][i] = ((r + 2 * dr) * 7 + f + 2 * df) as u8;
                    g.can_jump[d] = Bitboard(g.can_jump[d].0 | (1 << i));
                }
            }
            i += 1;
        }
        d += 1;
    }
    g
}

/// The board as drawn: no lines across the four inner corners.
pub static PLAIN: Geometry = build(false);
/// The `corner-links` board: every two adjacent points are joined.
pub static CORNER_LINKS: Geometry = build(true);

impl Geometry {
    /// The board of a variant: [`CORNER_LINKS`] or [`PLAIN`]. Both are
    /// statics, so asking costs nothing.
    #[inline]
    pub fn get(corner_links: bool) -> &'static Geometry {
        if corner_links {
            &CORNER_LINKS
        } else {
            &PLAIN
        }
    }

    /// The neighbour of `p` in direction `d`, if a line joins them.
    #[inline]
    pub fn step(&self, p: Point, d: Direction) -> Option<Point> {
        Point::from_index(self.neighbour[d as usize][p.index()])
    }

    /// The points of `empty` a piece on `from` could reach by moving
    /// again and again while everything else stands still: steps to empty
    /// points and jumps over a point of `jumpable` to an empty landing.
    /// Jumped pieces are not taken off, so a chain reaches only landings
    /// over pieces still standing. With `jumpable` empty, steps alone
    /// (the foxes' room in alpha-beta's evaluation); with the geese, the
    /// region a fox could reach (the solver's shut-in estimate).
    #[inline]
    pub fn reachable(&self, from: Bitboard, empty: Bitboard, jumpable: Bitboard) -> Bitboard {
        let mut reach = from;
        loop {
            let mut next = reach;
            for d in 0..8 {
                let delta = Direction::from_index(d as u8).delta();
                next |= (reach & self.has_line[d]).shift(delta) & empty;
                next |= ((reach & self.can_jump[d]).shift(delta) & jumpable).shift(delta) & empty;
            }
            if next == reach {
                return reach & empty;
            }
            reach = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(g: &Geometry) -> usize {
        Point::all()
            .map(|p| g.adjacent[p.index()].count() as usize)
            .sum::<usize>()
            / 2
    }

    #[test]
    fn line_counts() {
        // 52 orthogonal lines; diagonals: 2 per unit square, 16 squares in the
        // 3x7 bars counted once (4 squares per arm + 8 in the centre block).
        let p = |s: &str| Point::parse(s).unwrap();
        assert!(!PLAIN.adjacent[p("c6").index()].contains(p("b5")));
        assert!(CORNER_LINKS.adjacent[p("c6").index()].contains(p("b5")));
        assert!(PLAIN.adjacent[p("d4").index()].contains(p("e5")));
        assert_eq!(links(&CORNER_LINKS), links(&PLAIN) + 4);
        for g in [&PLAIN, &CORNER_LINKS] {
            for q in Point::all() {
                for d in Direction::ALL {
                    if let Some(n) = g.step(q, d) {
                        assert_eq!(g.step(n, Direction::from_index(d as u8 + 4)), Some(q));
                        assert_eq!(g.step(q.mirror(), d.mirror()), Some(n.mirror()));
                    }
                }
            }
        }
    }
}
