//! Points of the 33-point cross.
//!
//! A point is stored as its index `row * 7 + file` in the 7x7 grid (file `a` = 0,
//! row `1` = 0), so a set of points is one `u64` ([`crate::Bitboard`]) and a step in
//! a direction is a constant shift. The 16 grid cells in the four 2x2 corners are
//! not points; [`Point::new`] refuses them.

use std::fmt;

/// One of the 33 points of the cross. Always on the board.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Point(u8);

/// Whether grid cell (file, row), both 0..7, is a point of the cross.
pub const fn on_cross(file: i32, row: i32) -> bool {
    if file < 0 || file > 6 || row < 0 || row > 6 {
        return false;
    }
    let file_in_arm = file >= 2 && file <= 4;
    let row_in_arm = row >= 2 && row <= 4;
    file_in_arm || row_in_arm
}

impl Point {
    /// The point at `file` (0 = `a`) and `row` (0 = row `1`), if it is on the cross.
    pub const fn new(file: i32, row: i32) -> Option<Point> {
        if on_cross(file, row) {
            Some(Point((row * 7 + file) as u8))
        } else {
            None
        }
    }

    /// The point with grid index `index`, if that cell is on the cross.
    pub const fn from_index(index: u8) -> Option<Point> {
        if index >= 49 {
            return None;
        }
        Point::new((index % 7) as i32, (index / 7) as i32)
    }

    /// Builds a point from an index known to be on the board (tables, bit scans).
    #[inline]
    pub(crate) const fn from_index_unchecked(index: u8) -> Point {
        Point(index)
    }

    /// Grid index `row * 7 + file`, in 0..49.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// File, 0 (`a`) to 6 (`g`).
    #[inline]
    pub const fn file(self) -> i32 {
        (self.0 % 7) as i32
    }

    /// Row, 0 (row `1`) to 6 (row `7`).
    #[inline]
    pub const fn row(self) -> i32 {
        (self.0 / 7) as i32
    }

    /// The left-right mirror image (file `a` <-> `g`).
    #[inline]
    pub const fn mirror(self) -> Point {
        Point((self.row() * 7 + (6 - self.file())) as u8)
    }

    /// Parses a point name such as `d4`.
    pub fn parse(text: &str) -> Option<Point> {
        let bytes = text.as_bytes();
        if bytes.len() != 2 {
            return None;
        }
        let file = bytes[0].wrapping_sub(b'a') as i32;
        let row = bytes[1].wrapping_sub(b'1') as i32;
        Point::new(file, row)
    }

    /// All 33 points in index order (row 1 first, left to right).
    pub fn all() -> impl Iterator<Item = Point> {
        (0u8..49).filter_map(Point::from_index)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file() as u8) as char,
            (b'1' + self.row() as u8) as char
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_three_points() {
        assert_eq!(Point::all().count(), 33);
        assert!(Point::parse("a1").is_none());
        assert!(Point::parse("b6").is_none());
        assert_eq!(Point::parse("d4").unwrap().to_string(), "d4");
        assert_eq!(Point::parse("a3").unwrap().mirror().to_string(), "g3");
        for p in Point::all() {
            assert_eq!(Point::parse(&p.to_string()), Some(p));
            assert_eq!(p.mirror().mirror(), p);
        }
    }
}
