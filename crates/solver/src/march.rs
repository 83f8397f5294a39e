//! The geese's march: a proof, without searching the foxes' moves, that the
//! geese of Two Foxes win a closing position by steps behind a wall the
//! foxes cannot jump.
//!
//! # Why
//!
//! Near the end of a won game the foxes can seldom take anything: every
//! goose they could reach is backed by another goose or the board's edge.
//! They shuffle, and each of their moves is a new branch that df-pn must
//! answer one by one, though few of them matter: what matters is whether
//! the geese can keep the wall whole while they fill the pen or close the
//! foxes in. The proofs of such positions grow about tenfold every four
//! plies (experiments/README.md), which is what stopped exact values 14
//! plies before the end. This module answers many of them as one question
//! about the geese's placement and where the foxes may be.
//!
//! # The abstract game
//!
//! A state is the geese's placement `G`, two *clouds* `C1` and `C2` (one
//! fox stands on a point of `C1`, the other on a point of `C2`) and the
//! sideways steps `s` the geese have left (at most S, [`March::new`]). The
//! geese are to move.
//!
//! `G` is *solid* against a set of points `R` when no fox on a point of
//! `R` could jump: no goose `y` has a jump line `x`-`y`-`z` with `x ∈ R`
//! and `z` free of geese.
//!
//! A step `a→b` of a goose (forward, or sideways while `s > 0`) is *good*
//! in `(G, C1, C2, s)` when, with `G' = G − a + b`:
//! - the pen is full (rule 2), or
//! - `G'` is solid against `D1 ∪ D2`, where `Di = Ci − b` (the foxes stand
//!   where they stood, not on `b`), and the geese march after the foxes'
//!   move: one fox steps, so the geese march in `(G', N(D1), D2, s')`
//!   unless no point of `D1` has a free neighbour, and in
//!   `(G', D1, N(D2), s')` unless no point of `D2` has one (`N(D)`: the
//!   free points next to `D`; `s'` is one less after a sideways step).
//!   Where neither fox can step, the geese have won (rule 3).
//!
//! The geese *march* in a state when the foxes cannot stand on the
//! targets of all its good steps at once: a good target lies outside
//! `C1 ∪ C2`; or there are at least three good targets; or two that no
//! placement with one fox in `C1` and one in `C2` covers.
//!
//! A real position with the geese to move is asked as the state whose
//! clouds are its foxes' two points. One with the foxes to move is a
//! march when no fox can jump now and the geese march after each fox's
//! step, as above.
//!
//! # Why a march is a real win
//!
//! Take a real position with the geese to move whose state marches. Its
//! foxes stand one in each cloud, so some good step is free (the last
//! condition); play it. The foxes are to move, standing in `D1` and `D2`,
//! and `G'` is solid against both: they cannot jump. If neither can step,
//! the geese have won; otherwise one steps, to a free point next to its
//! cloud, the other staying: the geese are to move in one of the states
//! the step's goodness required to march. Each good step raises the
//! geese's summed rows or spends one of the `s` sideways steps, and no
//! capture happens, so by induction on (summed rows, `s`) the geese fill
//! the pen or shut the foxes in.
//!
//! The draw rules never intervene. Every forward step resets the quiet
//! counter, and between two forward steps there are at most S sideways
//! steps and one fox step after each goose move, so the counter never
//! passes its value at the start plus 2S + 1; a position is only asked if
//! that stays below the fifty-move limit. A march may repeat a placement
//! (a goose stepping sideways and back), but it is a win of the game
//! without rule 4 (G″ in the crate docs), which is what a proof may rest
//! on: a march is a leaf a df-pn search may treat as won, as it treats the
//! free fox of the classic game.
//!
//! It is a sufficient condition only: the clouds over-estimate the foxes
//! (a fox may be anywhere in its cloud, and the geese's reply may not
//! depend on where), the geese's sideways steps are bounded, and any goose
//! a fox could reach must stay backed. Where it does not hold, nothing is
//! claimed and the search goes on.
//!
//! # Cost
//!
//! The states form a DAG, searched depth first with a table of settled
//! states: won, or not won after every good step was tried. A question
//! may expand at most [`March::new`]'s budget of states; a state cut off
//! by the budget is not stored, so a later question may settle it. Many
//! real positions (every placement of the foxes in the same clouds) share
//! one state, which is where the saving lies; the table is what makes a
//! small budget per question enough (experiments/README.md, "the geese's
//! march").

use halatafl_rules::{
    Bitboard, Point, Position, Side, Variant, VariantKind, FIFTY_MOVE_PLIES, PEN,
};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The most sideways steps a march may allow: a march must stay clear of
/// the fifty-move rule, which sideways steps (and the foxes' steps between
/// them) count towards.
pub const MAX_MARCH_SIDEWAYS: u8 = 16;

/// Settled states before the table is emptied (a bound on its memory:
/// about 50 bytes a state, so about 100 MiB).
const MEMO_STATES: usize = 1 << 21;

/// The board's lines as the march needs them, read off
/// [`Position::legal_moves`] of one fox or one goose on an otherwise empty
/// board (plain or with corner links), not written out by hand.
struct Lines {
    /// Points a fox may step to from a point.
    fox: [Bitboard; 49],
    /// The points a goose steps forward (straight or diagonally) to a point
    /// from.
    forward_from: [Bitboard; 49],
    /// The points a goose steps sideways to a point from.
    sideways_from: [Bitboard; 49],
    /// The jumps by direction: `(delta, from)`, a fox on a point of `from`
    /// jumping over the point `delta` bit indices on, to the point `2 delta`
    /// on (a jump follows one line straight, so its three points are
    /// evenly spaced in the bit layout, row * 7 + file).
    jumps: Vec<(i32, Bitboard)>,
}

impl Lines {
    fn new(corner_links: bool) -> Lines {
        let classic = |sideways: bool| {
            Variant::classic(17, sideways)
                .expect("17 geese is a classic setting")
                .with_corner_links(corner_links)
        };
        let (plain, with_sideways) = (classic(false), classic(true));
        let moves = |variant: Variant, foxes: Bitboard, geese: Bitboard, side: Side| {
            Position::new(variant, foxes, geese, side, 0)
                .expect("one fox, at most one goose")
                .legal_moves()
        };
        let mut lines = Lines {
            fox: [Bitboard::EMPTY; 49],
            forward_from: [Bitboard::EMPTY; 49],
            sideways_from: [Bitboard::EMPTY; 49],
            jumps: Vec::new(),
        };
        let points: Vec<Point> = Point::all().collect();
        for &x in &points {
            let alone = moves(plain, Bitboard::from_point(x), Bitboard::EMPTY, Side::Foxes);
            lines.fox[x.index()] = alone.iter().fold(Bitboard::EMPTY, |b, m| b.with(m.to()));
            for y in lines.fox[x.index()] {
                let over = moves(
                    plain,
                    Bitboard::from_point(x),
                    Bitboard::from_point(y),
                    Side::Foxes,
                );
                for m in over.iter().filter(|m| m.is_capture()) {
                    let delta = y.index() as i32 - x.index() as i32;
                    assert_eq!(
                        m.to().index() as i32 - y.index() as i32,
                        delta,
                        "a jump follows one line straight"
                    );
                    match lines.jumps.iter_mut().find(|(d, _)| *d == delta) {
                        Some((_, from)) => *from = from.with(x),
                        None => lines.jumps.push((delta, Bitboard::from_point(x))),
                    }
                }
            }
        }
        for &a in &points {
            // A goose's targets with the fox on each other point in turn: the
            // fox blocks one target at most, so the union has them all.
            let goose = Bitboard::from_point(a);
            let targets = |variant: Variant| {
                points
                    .iter()
                    .filter(|&&f| f != a)
                    .flat_map(|&f| moves(variant, Bitboard::from_point(f), goose, Side::Geese))
                    .fold(Bitboard::EMPTY, |b, m| b.with(m.to()))
            };
            let forward = targets(plain);
            for b in forward {
                lines.forward_from[b.index()] = lines.forward_from[b.index()].with(a);
            }
            for b in targets(with_sideways) & !forward {
                lines.sideways_from[b.index()] = lines.sideways_from[b.index()].with(a);
            }
        }
        lines
    }

    /// The `free` points a fox on a point of `cloud` can step to: where it
    /// stands after it moves.
    fn steps(&self, cloud: Bitboard, free: Bitboard) -> Bitboard {
        cloud.fold(Bitboard::EMPTY, |c, q| c | (self.fox[q.index()] & free))
    }

    /// Whether no fox anywhere in `region` could jump a goose of `geese`:
    /// per direction, the region's points that can jump that way, moved
    /// one step onto geese and one more onto points free of geese.
    fn solid(&self, geese: Bitboard, region: Bitboard) -> bool {
        let free = Bitboard::BOARD.0 & !geese.0;
        self.jumps.iter().all(|&(delta, from)| {
            let over = Bitboard((region & from).0).shift(delta).0 & geese.0;
            Bitboard(over).shift(delta).0 & free == 0
        })
    }
}

/// A multiply-and-fold hash for the table's three-word keys (the keys are
/// placements, not adversarial input).
#[derive(Default)]
struct StateHasher(u64);

impl Hasher for StateHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(29) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// The march's search: its lines, a table of settled states and a budget
/// per question.
pub struct March {
    lines: [Lines; 2],
    settled: HashMap<(u64, u64, u64), bool, BuildHasherDefault<StateHasher>>,
    budget: u64,
    /// Sideways steps the geese may take on any line of a march.
    sideways: u8,
    spent: u64,
    /// Whether the budget ran out below the state being searched.
    cut: bool,
}

impl March {
    /// A march search that expands at most `budget` states per question (0
    /// turns it off: nothing is ever claimed) and lets the geese step
    /// sideways at most `sideways` times on any line (at most
    /// [`MAX_MARCH_SIDEWAYS`]).
    pub fn new(budget: u64, sideways: u8) -> March {
        March {
            lines: [Lines::new(false), Lines::new(true)],
            settled: HashMap::default(),
            budget,
            sideways: sideways.min(MAX_MARCH_SIDEWAYS),
            spent: 0,
            cut: false,
        }
    }

    /// Whether the geese win `p` (no history needed: module docs) by a
    /// march. `false` claims nothing.
    pub fn geese_win(&mut self, p: &Position) -> bool {
        if self.budget == 0 || p.variant().kind != VariantKind::TwoFoxes {
            return false;
        }
        let geese = p.geese();
        if geese.count() < 9 || p.outcome_without_history().is_some() {
            return false;
        }
        if self.settled.len() > MEMO_STATES {
            self.settled.clear();
        }
        self.spent = 0;
        self.cut = false;
        let links = p.variant().corner_links;
        let lines = &self.lines[links as usize];
        let mut foxes = p.foxes();
        let first = Bitboard::from_point(foxes.next().expect("two foxes"));
        let second = Bitboard::from_point(foxes.next().expect("two foxes"));
        // The quiet plies a march may add before its first forward step:
        // the foxes' step, and each sideways step with the foxes' answer.
        if p.quiet() as u32 + 2 * self.sideways as u32 + 2 > FIFTY_MOVE_PLIES as u32 - 1 {
            return false;
        }
        let left = self.sideways;
        match p.side() {
            Side::Foxes => {
                lines.solid(geese, first | second)
                    && self.after_foxes(links, geese.0, first, second, left)
            }
            // The foxes stand on known points: their clouds are those points.
            Side::Geese => self.marches(links, geese.0, first.0, second.0, left),
        }
    }

    /// Whether the geese march after the foxes' move, one fox on a point of
    /// `cloud` and the other on a point of `other`, neither able to jump.
    /// One fox steps: either the first (the second stays where it was) or
    /// the second, and the geese must march after each; a fox with no step
    /// from anywhere in its cloud cannot be the one that moves, and where
    /// neither can move the geese have won (rule 3).
    fn after_foxes(
        &mut self,
        links: bool,
        geese: u64,
        cloud: Bitboard,
        other: Bitboard,
        left: u8,
    ) -> bool {
        let lines = &self.lines[links as usize];
        let free = Bitboard(Bitboard::BOARD.0 & !geese);
        let (moved, other_moved) = (lines.steps(cloud, free), lines.steps(other, free));
        (moved.is_empty() || self.marches(links, geese, moved.0, other.0, left))
            && (other_moved.is_empty() || self.marches(links, geese, cloud.0, other_moved.0, left))
    }

    /// Whether the geese to move march in state `(geese, cloud, other)`:
    /// one fox on a point of `cloud`, the other on a point of `other`.
    /// `left` sideways steps left.
    fn marches(&mut self, links: bool, geese: u64, cloud: u64, other: u64, left: u8) -> bool {
        let key = (
            geese,
            cloud.min(other),
            cloud.max(other) | (left as u64) << 56,
        );
        if let Some(&won) = self.settled.get(&key) {
            return won;
        }
        if self.spent >= self.budget {
            self.cut = true;
            return false;
        }
        self.spent += 1;
        let cut_above = std::mem::replace(&mut self.cut, false);
        let won = self.good_steps(links, geese, cloud, other, left);
        if won || !self.cut {
            self.settled.insert(key, won);
        }
        self.cut |= cut_above;
        won
    }

    /// Whether the geese in `(geese, cloud, other)` have good steps the
    /// foxes cannot all block (module docs), searched until they are found.
    fn good_steps(&mut self, links: bool, geese: u64, cloud: u64, other: u64, left: u8) -> bool {
        let free = Bitboard::BOARD.0 & !geese;
        let reach = cloud | other;
        // Targets no fox can stand on first, then by row, highest first
        // (steps into the pen end the game soonest), forward before
        // sideways; a target is good once one step to it is.
        let mut found = 0u64;
        let open = free & !reach;
        for targets in [open, free & reach] {
            let mut targets = targets;
            while targets != 0 {
                let b = 63 - targets.leading_zeros() as u8;
                let target = 1u64 << b;
                targets &= !target;
                // A fox surely stands there.
                if cloud == target || other == target {
                    continue;
                }
                let lines = &self.lines[links as usize];
                let forward = lines.forward_from[b as usize].0 & geese;
                let sideways = if left > 0 {
                    lines.sideways_from[b as usize].0 & geese
                } else {
                    0
                };
                let good = Bitboard(forward)
                    .map(|a| (a, false))
                    .chain(Bitboard(sideways).map(|a| (a, true)))
                    .any(|(a, side)| {
                        self.good_step(links, geese, cloud, other, left, a.index() as u8, b, side)
                    });
                if good {
                    found |= target;
                    if !blockable(found, cloud, other) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether the geese's step `a`→`b` (sideways if `side`) is good in
    /// `(geese, cloud, other)` with `left` sideways steps left (module docs).
    #[allow(clippy::too_many_arguments)]
    fn good_step(
        &mut self,
        links: bool,
        geese: u64,
        cloud: u64,
        other: u64,
        left: u8,
        a: u8,
        b: u8,
        side: bool,
    ) -> bool {
        let target = 1u64 << b;
        let after = geese & !(1 << a) | target;
        if after & PEN.0 == PEN.0 {
            return true;
        }
        // The foxes stand where they stood, off the target.
        let (here, there) = (Bitboard(cloud & !target), Bitboard(other & !target));
        self.lines[links as usize].solid(Bitboard(after), here | there)
            && self.after_foxes(links, after, here, there, left - side as u8)
    }
}

/// Whether two foxes, one on a point of `cloud` and one on a point of
/// `other`, can stand on every point of `targets`.
fn blockable(targets: u64, cloud: u64, other: u64) -> bool {
    if targets & !(cloud | other) != 0 {
        return false;
    }
    match targets.count_ones() {
        0 | 1 => true,
        2 => {
            let (t, u) = (targets & targets.wrapping_neg(), targets & (targets - 1));
            (t & cloud != 0 && u & other != 0) || (u & cloud != 0 && t & other != 0)
        }
        _ => false,
    }
}
