//! Sets of points as one `u64`, bit `row * 7 + file`.

use crate::point::{on_cross, Point};
use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// A set of points. Only the 33 bits of the cross are ever set by this crate's
/// own operations; [`Bitboard::not`] masks with [`Bitboard::BOARD`] to keep that.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Bitboard(pub u64);

const fn board_mask() -> u64 {
    let mut mask = 0u64;
    let mut i = 0;
    while i < 49 {
        if on_cross(i % 7, i / 7) {
            mask |= 1 << i;
        }
        i += 1;
    }
    mask
}

/// Bit-reversal of 7-bit rows, for the mirror.
const REVERSE7: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut v = 0;
    while v < 128 {
        let mut r = 0u8;
        let mut b = 0;
        while b < 7 {
            if v & (1 << b) != 0 {
                r |= 1 << (6 - b);
            }
            b += 1;
        }
        table[v] = r;
        v += 1;
    }
    table
};

impl Bitboard {
    /// No point.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// The 33 points of the cross.
    pub const BOARD: Bitboard = Bitboard(board_mask());

    /// The set of one point.
    #[inline]
    pub const fn from_point(p: Point) -> Bitboard {
        Bitboard(1 << p.index())
    }

    /// Whether `p` is in the set.
    #[inline]
    pub const fn contains(self, p: Point) -> bool {
        self.0 & (1 << p.index()) != 0
    }

    /// Whether the set has no point.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set has a point: `!is_empty()`, which reads better in
    /// the move generator's conditions.
    #[inline]
    pub const fn any(self) -> bool {
        self.0 != 0
    }

    /// Number of points (a population count).
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// The set with `p` added.
    #[inline]
    pub const fn with(self, p: Point) -> Bitboard {
        Bitboard(self.0 | (1 << p.index()))
    }

    /// The set with `p` removed.
    #[inline]
    pub const fn without(self, p: Point) -> Bitboard {
        Bitboard(self.0 & !(1 << p.index()))
    }

    /// The lowest point of the set.
    #[inline]
    pub fn first(self) -> Option<Point> {
        if self.0 == 0 {
            None
        } else {
            Some(Point::from_index_unchecked(self.0.trailing_zeros() as u8))
        }
    }

    /// Shifts every point by `delta` grid cells (`file + 7 * row`). The caller
    /// masks the source so that no point leaves the board or wraps a row.
    #[inline]
    pub const fn shift(self, delta: i32) -> Bitboard {
        if delta >= 0 {
            Bitboard(self.0 << delta)
        } else {
            Bitboard(self.0 >> -delta)
        }
    }

    /// The left-right mirror image (file `a` <-> `g`).
    #[inline]
    pub fn mirror(self) -> Bitboard {
        let mut out = 0u64;
        let mut row = 0;
        while row < 7 {
            let bits = (self.0 >> (7 * row)) & 0x7f;
            out |= (REVERSE7[bits as usize] as u64) << (7 * row);
            row += 1;
        }
        Bitboard(out)
    }
}

impl Iterator for Bitboard {
    type Item = Point;

    #[inline]
    fn next(&mut self) -> Option<Point> {
        if self.0 == 0 {
            return None;
        }
        let index = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(Point::from_index_unchecked(index))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl BitAnd for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn bitand(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 & rhs.0)
    }
}
impl BitOr for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn bitor(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 | rhs.0)
    }
}
impl BitXor for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn bitxor(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 ^ rhs.0)
    }
}
impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard(!self.0 & Bitboard::BOARD.0)
    }
}
impl BitAndAssign for Bitboard {
    #[inline]
    fn bitand_assign(&mut self, rhs: Bitboard) {
        self.0 &= rhs.0
    }
}
impl BitOrAssign for Bitboard {
    #[inline]
    fn bitor_assign(&mut self, rhs: Bitboard) {
        self.0 |= rhs.0
    }
}
impl BitXorAssign for Bitboard {
    #[inline]
    fn bitxor_assign(&mut self, rhs: Bitboard) {
        self.0 ^= rhs.0
    }
}

impl fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(*self).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_has_33_points_and_mirror_is_an_involution() {
        assert_eq!(Bitboard::BOARD.count(), 33);
        assert_eq!(Bitboard::BOARD.mirror(), Bitboard::BOARD);
        let a3 = Bitboard::from_point(Point::parse("a3").unwrap());
        assert_eq!(
            a3.mirror(),
            Bitboard::from_point(Point::parse("g3").unwrap())
        );
    }
}
