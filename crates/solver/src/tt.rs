//! The transposition table of the proof-number search.
//!
//! One table serves both boolean searches ("foxes win?" and "geese win?"):
//! the prover is part of the key. Entries hold the whole placement (both
//! bitboards and the side to move), not just a hash, so two positions can
//! never share an entry: a hash collision cannot turn into a wrong proof.
//!
//! The quiet-ply counter is **not** part of the key. Instead an entry keeps
//! the range of counters its final result holds for (see the crate docs for
//! why these ranges are sound):
//! - a proof found with counter `q` holds for every counter `<= q`
//!   (`proof_upto = q + 1`);
//! - a path-independent disproof found with counter `q` holds for every
//!   counter `>= q` (`disproof_from = q`).
//!
//! The proof and disproof numbers of unsolved positions are shared by all
//! counters: they only steer the search, they never decide a value.

use halatafl_rules::{Position, Side};

/// Counters at or above this draw the game; the table clamps to it.
const QUIET_CAP: u16 = halatafl_rules::FIFTY_MOVE_PLIES;

/// `disproof_from` of an entry without a disproof.
const NO_DISPROOF: u8 = u8::MAX;

/// Bit of the first key word marking "geese to move" (the board uses bits 0..49).
const GEESE_TO_MOVE_BIT: u64 = 1 << 63;
/// Bit of the first key word marking the geese as the prover.
const GEESE_PROVE_BIT: u64 = 1 << 62;
/// Bit of the first key word marking the geese's restricted search
/// ([`Searcher::RestrictedGeese`]); its sideways steps left are in the bits
/// from [`SIDEWAYS_SHIFT`] up.
const RESTRICTED_BIT: u64 = 1 << 61;
/// Where the first key word holds a restricted search's sideways steps left
/// (the board uses bits 0..49).
const SIDEWAYS_SHIFT: u32 = 50;

/// Entries per bucket: a lookup reads one bucket, a store replaces the
/// bucket's entry that cost the least work.
const BUCKET: usize = 4;

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// Fox bitboard with [`GEESE_TO_MOVE_BIT`] and [`GEESE_PROVE_BIT`]; 0 = empty slot
    /// (there is always at least one fox).
    key_foxes: u64,
    key_geese: u64,
    pn: u32,
    dn: u32,
    /// Nodes searched below this entry (saturating): what replacement keeps.
    work: u32,
    /// Proven for every quiet counter below this; 0 = no proof.
    proof_upto: u8,
    /// Disproven (path-independently) for every counter from this on.
    disproof_from: u8,
}

/// What the table knows about a position for one prover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    /// The prover wins (a proof holds at this counter).
    Proven,
    /// The prover does not win, whatever the path to here.
    Disproven,
    /// Unsolved: the last proof and disproof numbers seen.
    Numbers {
        /// Proof number.
        pn: u32,
        /// Disproof number.
        dn: u32,
    },
    /// Never stored (or replaced).
    Missing,
}

/// Table statistics for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Slots in the table.
    pub capacity: usize,
    /// Slots holding an entry.
    pub used: usize,
    /// Bytes of the table.
    pub bytes: usize,
    /// Entries whose proof and disproof ranges overlap. Always 0 unless the
    /// search has a bug; tests assert it.
    pub contradictions: u64,
}

/// A fixed-size table of `Entry`, in buckets of `BUCKET`.
pub struct Table {
    entries: Vec<Entry>,
    mask: usize,
    used: usize,
    contradictions: u64,
}

/// Whose search an entry belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Searcher {
    /// "Do the foxes win?"
    Foxes,
    /// "Do the geese win?"
    Geese,
    /// "Do the geese win stepping forward, and sideways at most this many
    /// more times?" (the solver's restricted search). Its entries are its
    /// own, one set per number of sideways steps left: its disproofs say
    /// only that the restricted geese do not win, which is no disproof in
    /// the real game. Its proofs are real ones and are stored as the
    /// geese's.
    RestrictedGeese(u8),
}

impl Searcher {
    /// The unrestricted search of `prover`.
    pub fn of(prover: Side) -> Searcher {
        match prover {
            Side::Foxes => Searcher::Foxes,
            Side::Geese => Searcher::Geese,
        }
    }

    /// The side that proves.
    pub fn prover(self) -> Side {
        match self {
            Searcher::Foxes => Side::Foxes,
            Searcher::Geese | Searcher::RestrictedGeese(_) => Side::Geese,
        }
    }
}

fn keys(position: &Position, searcher: Searcher) -> (u64, u64) {
    let mut k = position.foxes().0;
    if position.side() == Side::Geese {
        k |= GEESE_TO_MOVE_BIT;
    }
    match searcher {
        Searcher::Foxes => {}
        Searcher::Geese => k |= GEESE_PROVE_BIT,
        Searcher::RestrictedGeese(left) => {
            k |= GEESE_PROVE_BIT | RESTRICTED_BIT | u64::from(left) << SIDEWAYS_SHIFT
        }
    }
    (k, position.geese().0)
}

fn quiet_of(position: &Position) -> u8 {
    position.quiet().min(QUIET_CAP) as u8
}

impl Table {
    /// Size of one entry in bytes.
    pub const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

    /// A table of at most `mib` MiB (at least one bucket), a power of two in buckets.
    pub fn new(mib: usize) -> Table {
        let want = (mib << 20) / (Self::ENTRY_BYTES * BUCKET);
        let buckets = if want <= 1 {
            1
        } else {
            1usize << (usize::BITS - 1 - want.leading_zeros())
        };
        Table {
            entries: vec![Entry::default(); buckets * BUCKET],
            mask: buckets - 1,
            used: 0,
            contradictions: 0,
        }
    }

    /// How full the table is, and the contradiction count.
    pub fn stats(&self) -> TableStats {
        TableStats {
            capacity: self.entries.len(),
            used: self.used,
            bytes: self.entries.len() * Self::ENTRY_BYTES,
            contradictions: self.contradictions,
        }
    }

    fn bucket(&self, position: &Position, searcher: Searcher) -> usize {
        let salt = match searcher {
            Searcher::Foxes => 0,
            Searcher::Geese => 0x9e37_79b9_7f4a_7c15,
            Searcher::RestrictedGeese(left) => {
                0x2545_f491_4f6c_dd1d_u64.wrapping_mul(u64::from(left) + 1)
            }
        };
        // The Zobrist hash's high bits pick the bucket.
        let h = (position.hash() ^ salt).wrapping_mul(0xff51_afd7_ed55_8ccd);
        ((h >> 32) as usize & self.mask) * BUCKET
    }

    fn find(&self, position: &Position, searcher: Searcher) -> Option<usize> {
        let (kf, kg) = keys(position, searcher);
        let start = self.bucket(position, searcher);
        (start..start + BUCKET)
            .find(|&i| self.entries[i].key_foxes == kf && self.entries[i].key_geese == kg)
    }

    /// What `searcher`'s own entry for `position` says.
    fn own(&self, position: &Position, searcher: Searcher) -> Known {
        let q = quiet_of(position);
        match self.find(position, searcher) {
            None => Known::Missing,
            Some(i) => {
                let e = &self.entries[i];
                if q < e.proof_upto {
                    Known::Proven
                } else if q >= e.disproof_from {
                    Known::Disproven
                } else {
                    Known::Numbers { pn: e.pn, dn: e.dn }
                }
            }
        }
    }

    /// What is known of `position` for `searcher`. A proof for the other
    /// side is a disproof for this one, so both are read. The restricted
    /// geese search also takes the real geese search's results (a real
    /// proof still wins with the geese restricted after it; a real
    /// disproof holds for the restricted geese a fortiori).
    pub fn lookup(&self, position: &Position, searcher: Searcher) -> Known {
        let other = Searcher::of(searcher.prover().other());
        if self.own(position, other) == Known::Proven {
            return Known::Disproven;
        }
        let own = self.own(position, searcher);
        if let (Searcher::RestrictedGeese(_), Known::Numbers { .. } | Known::Missing) =
            (searcher, own)
        {
            if let solved @ (Known::Proven | Known::Disproven) = self.own(position, Searcher::Geese)
            {
                return solved;
            }
        }
        own
    }

    /// The slot for `position`: its own, else the bucket's least-worked one.
    fn slot(&mut self, position: &Position, searcher: Searcher, work: u32) -> Option<usize> {
        if let Some(i) = self.find(position, searcher) {
            return Some(i);
        }
        let start = self.bucket(position, searcher);
        let victim = (start..start + BUCKET)
            .min_by_key(|&i| {
                let e = &self.entries[i];
                // Empty slots first, then unsolved entries, by work.
                let solved = e.proof_upto > 0 || e.disproof_from != NO_DISPROOF;
                (e.key_foxes != 0, solved, e.work)
            })
            .expect("a bucket has slots");
        let e = &self.entries[victim];
        let solved = e.proof_upto > 0 || e.disproof_from != NO_DISPROOF;
        // A solved entry that cost more than this one is worth more.
        if e.key_foxes != 0 && solved && e.work > work {
            return None;
        }
        if e.key_foxes == 0 {
            self.used += 1;
        }
        let (kf, kg) = keys(position, searcher);
        self.entries[victim] = Entry {
            key_foxes: kf,
            key_geese: kg,
            pn: 1,
            dn: 1,
            work: 0,
            proof_upto: 0,
            disproof_from: NO_DISPROOF,
        };
        Some(victim)
    }

    fn check(&mut self, i: usize) {
        let e = &self.entries[i];
        if e.proof_upto > 0 && e.disproof_from < e.proof_upto {
            self.contradictions += 1;
        }
    }

    /// Records that `prover` wins `position` (at its counter, so at every
    /// lower one). A restricted search's proof is stored as its prover's.
    pub fn store_proof(&mut self, position: &Position, prover: Side, work: u64) {
        let work = work.min(u32::MAX as u64) as u32;
        if let Some(i) = self.slot(position, Searcher::of(prover), work) {
            let e = &mut self.entries[i];
            e.proof_upto = e.proof_upto.max(quiet_of(position) + 1);
            e.work = e.work.max(work);
            self.check(i);
        }
    }

    /// Records that `searcher`'s prover does not win `position` whatever
    /// the path (at its counter, so at every higher one).
    pub fn store_disproof(&mut self, position: &Position, searcher: Searcher, work: u64) {
        let work = work.min(u32::MAX as u64) as u32;
        if let Some(i) = self.slot(position, searcher, work) {
            let e = &mut self.entries[i];
            e.disproof_from = e.disproof_from.min(quiet_of(position));
            e.work = e.work.max(work);
            self.check(i);
        }
    }

    /// Records the numbers of an unsolved position (they only steer the search).
    pub fn store_numbers(
        &mut self,
        position: &Position,
        searcher: Searcher,
        pn: u64,
        dn: u64,
        work: u64,
    ) {
        let work = work.min(u32::MAX as u64) as u32;
        if let Some(i) = self.slot(position, searcher, work) {
            let e = &mut self.entries[i];
            e.pn = pn.clamp(1, u32::MAX as u64 - 1) as u32;
            e.dn = dn.clamp(1, u32::MAX as u64 - 1) as u32;
            e.work = e.work.saturating_add(work);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_rules::Variant;

    fn at(quiet: u16) -> Position {
        Position::from_fen(
            &format!("F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f {quiet}"),
            Variant::two_foxes(),
        )
        .unwrap()
    }

    #[test]
    fn proofs_hold_below_their_counter_and_disproofs_above() {
        let mut t = Table::new(1);
        t.store_proof(&at(10), Side::Foxes, 5);
        assert_eq!(t.lookup(&at(10), Searcher::Foxes), Known::Proven);
        assert_eq!(t.lookup(&at(0), Searcher::Foxes), Known::Proven);
        assert!(matches!(
            t.lookup(&at(11), Searcher::Foxes),
            Known::Numbers { .. }
        ));
        // A foxes' proof is a geese' disproof at the same counters.
        assert_eq!(t.lookup(&at(3), Searcher::Geese), Known::Disproven);
        assert_eq!(t.lookup(&at(11), Searcher::Geese), Known::Missing);
        t.store_disproof(&at(40), Searcher::Foxes, 5);
        assert_eq!(t.lookup(&at(99), Searcher::Foxes), Known::Disproven);
        assert!(matches!(
            t.lookup(&at(39), Searcher::Foxes),
            Known::Numbers { .. }
        ));
        assert_eq!(t.stats().contradictions, 0);
        // A disproof below a proof's range is a contradiction, and counted.
        t.store_disproof(&at(5), Searcher::Foxes, 5);
        assert_eq!(t.stats().contradictions, 1);
    }

    #[test]
    fn restricted_disproofs_stay_apart_and_real_results_serve_the_restricted_search() {
        let mut t = Table::new(1);
        // Four placements: the start's children.
        let start = at(0);
        let child = |i: usize| {
            let mut c = start;
            c.play_unchecked(start.legal_moves()[i]);
            c
        };
        let (two, one) = (Searcher::RestrictedGeese(2), Searcher::RestrictedGeese(1));
        let p = child(0);
        // The restricted geese losing is no disproof of the real geese, nor
        // of the restricted geese with another count of sideways steps.
        t.store_disproof(&p, two, 1);
        assert_eq!(t.lookup(&p, two), Known::Disproven);
        assert_eq!(t.lookup(&p, one), Known::Missing);
        assert_eq!(t.lookup(&p, Searcher::Geese), Known::Missing);
        assert_eq!(t.lookup(&p, Searcher::Foxes), Known::Missing);
        // A real geese proof (where a restricted proof is stored too) holds
        // for every search of the geese and disproves the foxes.
        let q = child(1);
        t.store_numbers(&q, one, 3, 4, 1);
        assert_eq!(t.lookup(&q, one), Known::Numbers { pn: 3, dn: 4 });
        t.store_proof(&q, Side::Geese, 1);
        assert_eq!(t.lookup(&q, one), Known::Proven);
        assert_eq!(t.lookup(&q, Searcher::Geese), Known::Proven);
        assert_eq!(t.lookup(&q, Searcher::Foxes), Known::Disproven);
        // A foxes' proof and a real geese disproof disprove the restricted geese.
        let r = child(2);
        t.store_proof(&r, Side::Foxes, 1);
        assert_eq!(t.lookup(&r, two), Known::Disproven);
        let s = child(3);
        t.store_disproof(&s, Searcher::Geese, 1);
        assert_eq!(t.lookup(&s, two), Known::Disproven);
        assert_eq!(t.stats().contradictions, 0);
    }

    #[test]
    fn whole_placements_are_keys() {
        let mut t = Table::new(1);
        let a = at(0);
        let mut b = a;
        b.play_unchecked(a.legal_moves()[0]);
        t.store_proof(&a, Side::Foxes, 1);
        assert_eq!(t.lookup(&b, Searcher::Foxes), Known::Missing);
        assert_eq!(t.stats().used, 1);
    }
}
