//! The transposition table: one 16-byte entry per slot, indexed by the low bits
//! of the Zobrist hash ([`halatafl_rules::Position::hash`]) and checked by the
//! whole key. Always-replace: the newest search result is the most useful one
//! for move ordering, and iterative deepening re-stores the deep ones.
//!
//! The best move is stored as its index in the position's generated move list
//! (generation order is fixed for a position), so an entry stays small and a
//! key collision can only suggest a legal move, never an illegal one.

/// How a stored score relates to the true value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Bound {
    /// The true value.
    Exact = 0,
    /// The true value is at least this (a beta cut-off).
    Lower = 1,
    /// The true value is at most this (no move reached alpha).
    Upper = 2,
}

/// Marks "no move stored".
pub const NO_MOVE: u8 = u8::MAX;

/// One slot of the table, 16 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The whole Zobrist key, so an index collision is recognised.
    pub key: u64,
    /// The score; mate scores are stored relative to the entry's own
    /// position, not the root, so they stay right wherever it is found.
    pub score: i16,
    /// Remaining depth the score was searched to; -1 marks an empty slot.
    pub depth: i8,
    /// Whether `score` is exact or a bound.
    pub bound: Bound,
    /// The best move's index in the position's move list, or [`NO_MOVE`].
    pub move_index: u8,
}

const EMPTY: Entry = Entry {
    key: 0,
    score: 0,
    depth: -1,
    bound: Bound::Upper,
    move_index: NO_MOVE,
};

/// The table itself: a power of two of [`Entry`] slots.
pub struct Table {
    entries: Vec<Entry>,
    mask: usize,
}

impl Table {
    /// A table of at most `megabytes` MiB (a power of two entries, at least 1024).
    pub fn new(megabytes: usize) -> Table {
        let want = (megabytes.max(1) << 20) / std::mem::size_of::<Entry>();
        let mut n = 1024;
        while n * 2 <= want {
            n *= 2;
        }
        Table {
            entries: vec![EMPTY; n],
            mask: n - 1,
        }
    }

    /// Empties every slot (a new game), keeping the allocation.
    pub fn clear(&mut self) {
        self.entries.fill(EMPTY);
    }

    /// The entry stored for `key`, if its slot holds that very key.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.entries[key as usize & self.mask];
        (e.key == key && e.depth >= 0).then_some(e)
    }

    /// Stores a result in `key`'s slot, replacing whatever is there. The
    /// caller has made mate scores relative to this position; `depth` is
    /// clamped to 0..=127.
    #[inline]
    pub fn store(&mut self, key: u64, score: i32, depth: i32, bound: Bound, move_index: u8) {
        self.entries[key as usize & self.mask] = Entry {
            key,
            score: score as i16,
            depth: depth.clamp(0, 127) as i8,
            bound,
            move_index,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_round_trip() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
        let mut t = Table::new(1);
        assert_eq!(t.entries.len(), 65536);
        t.store(12345, -29990, 7, Bound::Lower, 3);
        let e = t.probe(12345).unwrap();
        assert_eq!(
            (e.score, e.depth, e.bound, e.move_index),
            (-29990, 7, Bound::Lower, 3)
        );
        assert!(t.probe(12345 + 65536).is_none());
    }
}
