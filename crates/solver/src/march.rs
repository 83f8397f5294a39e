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

use halatafl_rules::geometry::Geometry;
use halatafl_rules::{Bitboard, Direction, Position, Side, VariantKind, FIFTY_MOVE_PLIES, PEN};
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// The most sideways steps a march may allow: a march must stay clear of
/// the fifty-move rule, which sideways steps (and the foxes' steps between
/// them) count towards.
pub const MAX_MARCH_SIDEWAYS: u8 = 16;

/// Settled states before the table is emptied (a bound on its memory:
/// about 50 bytes a state, so about 100 MiB).
const MEMO_STATES: usize = 1 << 21;

/// The engine's lines of one board ([`Geometry`]) with the goose steps
/// turned round: for each point, the points a goose steps to it from.
struct Board {
    lines: &'static Geometry,
    /// The points a goose steps forward (straight or diagonally) to a point
    /// from: its neighbours to the south, south-east and south-west.
    from_behind: [Bitboard; 49],
    /// The points a goose steps sideways to a point from.
    from_the_side: [Bitboard; 49],
    /// Whether this is the `corner-links` board (the table's key tells the
    /// boards apart).
    corner_links: bool,
}

impl Board {
    /// The board of `corner_links`, built once.
    fn get(corner_links: bool) -> &'static Board {
        static BOARDS: OnceLock<[Board; 2]> = OnceLock::new();
        &BOARDS.get_or_init(|| [Board::new(false), Board::new(true)])[corner_links as usize]
    }

    fn new(corner_links: bool) -> Board {
        let lines = Geometry::get(corner_links);
        let from = |dirs: &[Direction]| {
            let mut table = [Bitboard::EMPTY; 49];
            for p in Bitboard::BOARD {
                table[p.index()] = dirs
                    .iter()
                    .filter_map(|&d| lines.step(p, d))
                    .fold(Bitboard::EMPTY, |b, q| b.with(q));
            }
            table
        };
        Board {
            lines,
            from_behind: from(&[Direction::South, Direction::SouthEast, Direction::SouthWest]),
            from_the_side: from(&[Direction::East, Direction::West]),
            corner_links,
        }
    }
}

/// The free points a fox on a point of `cloud` can step to: where it
/// stands after it moves.
fn fox_steps(board: &Board, cloud: Bitboard, free: Bitboard) -> Bitboard {
    cloud.fold(Bitboard::EMPTY, |c, q| {
        c | (board.lines.adjacent[q.index()] & free)
    })
}

/// Whether no fox anywhere in `region` could jump a goose of `geese`: per
/// direction, the region's points that can jump that way, moved one step
/// onto geese and one more onto points free of geese (as the engine finds
/// the foxes that can jump).
fn solid(board: &Board, geese: Bitboard, region: Bitboard) -> bool {
    let free = Bitboard::BOARD & !geese;
    Direction::ALL.iter().all(|&d| {
        let over = (region & board.lines.can_jump[d as usize]).shift(d.delta()) & geese;
        (over.shift(d.delta()) & free).is_empty()
    })
}

/// The march's search: a table of settled states and a budget per
/// question.
pub struct March {
    /// Settled states by (geese, lower cloud, higher cloud with the
    /// sideways steps left and the board in its top bits).
    settled: FxHashMap<(u64, u64, u64), bool>,
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
            settled: FxHashMap::default(),
            budget,
            sideways: sideways.min(MAX_MARCH_SIDEWAYS),
            spent: 0,
            cut: false,
        }
    }

    /// Whether the geese win `p` (no history needed: module docs) by a
    /// march. `false` claims nothing.
    pub fn geese_win(&mut self, p: &Position) -> bool {
        p.outcome_without_history().is_none() && self.geese_win_ongoing(p)
    }

    /// [`March::geese_win`] for a position whose game goes on by rules 1-3,
    /// which the search has checked already.
    pub(crate) fn geese_win_ongoing(&mut self, p: &Position) -> bool {
        // The quiet plies a march may add before its first forward step:
        // the foxes' step, and each sideways step with the foxes' answer.
        let quiet_room = p.quiet() as u32 + 2 * self.sideways as u32 + 2 < FIFTY_MOVE_PLIES as u32;
        if self.budget == 0 || p.variant().kind != VariantKind::TwoFoxes || !quiet_room {
            return false;
        }
        if self.settled.len() > MEMO_STATES {
            self.settled.clear();
        }
        self.spent = 0;
        self.cut = false;
        let board = Board::get(p.variant().corner_links);
        let geese = p.geese();
        // The foxes stand on known points: their clouds are those points.
        let mut foxes = p.foxes();
        let mut cloud = || 1u64 << foxes.next().expect("two foxes").index();
        let state = State {
            geese: geese.0,
            cloud: cloud(),
            other: cloud(),
            left: self.sideways,
        };
        match p.side() {
            Side::Foxes => {
                solid(board, geese, Bitboard(state.cloud | state.other))
                    && self.after_foxes(board, state)
            }
            Side::Geese => self.marches(board, state),
        }
    }

    /// Whether the geese march after the foxes' move in `state` (neither
    /// fox able to jump). One fox steps: either the first (the second
    /// stays where it was) or the second, and the geese must march after
    /// each; a fox with no step from anywhere in its cloud cannot be the
    /// one that moves, and where neither can move the geese have won
    /// (rule 3).
    fn after_foxes(&mut self, board: &'static Board, state: State) -> bool {
        let free = Bitboard::BOARD & !Bitboard(state.geese);
        let moved = fox_steps(board, Bitboard(state.cloud), free);
        let other_moved = fox_steps(board, Bitboard(state.other), free);
        (moved.is_empty()
            || self.marches(
                board,
                State {
                    cloud: moved.0,
                    ..state
                },
            ))
            && (other_moved.is_empty()
                || self.marches(
                    board,
                    State {
                        other: other_moved.0,
                        ..state
                    },
                ))
    }

    /// Whether the geese to move march in `state`.
    fn marches(&mut self, board: &'static Board, state: State) -> bool {
        let key = state.key(board);
        if let Some(&won) = self.settled.get(&key) {
            return won;
        }
        if self.spent >= self.budget {
            self.cut = true;
            return false;
        }
        self.spent += 1;
        let cut_above = std::mem::replace(&mut self.cut, false);
        let won = self.good_steps(board, state);
        if won || !self.cut {
            self.settled.insert(key, won);
        }
        self.cut |= cut_above;
        won
    }

    /// Whether the geese in `state` have good steps the foxes cannot all
    /// block (module docs), searched until they are found.
    fn good_steps(&mut self, board: &'static Board, state: State) -> bool {
        let State {
            geese,
            cloud,
            other,
            left,
        } = state;
        let free = Bitboard::BOARD.0 & !geese;
        let reach = cloud | other;
        // Targets no fox can stand on first, then by row, highest first
        // (steps into the pen end the game soonest), forward before
        // sideways; a target is good once one step to it is.
        let mut found = 0u64;
        for targets in [free & !reach, free & reach] {
            let mut targets = targets;
            while targets != 0 {
                let b = 63 - targets.leading_zeros() as u8;
                let target = 1u64 << b;
                targets &= !target;
                // A fox surely stands there.
                if cloud == target || other == target {
                    continue;
                }
                let forward = board.from_behind[b as usize] & Bitboard(geese);
                let sideways = if left > 0 {
                    board.from_the_side[b as usize] & Bitboard(geese)
                } else {
                    Bitboard::EMPTY
                };
                let good = forward
                    .map(|a| (a, false))
                    .chain(sideways.map(|a| (a, true)))
                    .any(|(a, side)| self.good_step(board, state, 1 << a.index(), target, side));
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

    /// Whether the geese's step from the point `from` to `target` (both
    /// one-point sets; sideways if `side`) is good in `state` (module docs).
    fn good_step(
        &mut self,
        board: &'static Board,
        state: State,
        from: u64,
        target: u64,
        side: bool,
    ) -> bool {
        let geese = state.geese & !from | target;
        if geese & PEN.0 == PEN.0 {
            return true;
        }
        // The foxes stand where they stood, off the target.
        let after = State {
            geese,
            cloud: state.cloud & !target,
            other: state.other & !target,
            left: state.left - side as u8,
        };
        solid(board, Bitboard(geese), Bitboard(after.cloud | after.other))
            && self.after_foxes(board, after)
    }
}

/// A state of the abstract game (module docs): the geese's placement, the
/// two foxes' clouds and the sideways steps left.
#[derive(Clone, Copy)]
struct State {
    geese: u64,
    cloud: u64,
    other: u64,
    left: u8,
}

impl State {
    /// The table's key: the foxes are alike, so the clouds in order; the
    /// sideways steps left and the board in the top bits (points use the
    /// low 49).
    fn key(self, board: &'static Board) -> (u64, u64, u64) {
        let links = board.corner_links as u64;
        let (low, high) = (self.cloud.min(self.other), self.cloud.max(self.other));
        (
            self.geese,
            low,
            high | (self.left as u64) << 56 | links << 63,
        )
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
