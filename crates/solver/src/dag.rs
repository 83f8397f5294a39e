//! Exact values of classic Fox and Geese without sideways steps, by a
//! memoised win/loss depth-first search over the game's acyclic state graph.
//!
//! # Why the game is a finite DAG without draws
//!
//! Without sideways steps every goose move is a forward step: it raises the
//! geese's summed rows by exactly one and resets the quiet counter. A fox
//! capture removes geese for good; a fox step keeps the geese where they
//! are and hands the move to the geese. So along any line of play the pair
//! (number of geese, −summed rows) strictly falls at every goose move and
//! capture, and a placement can never come back: threefold repetition
//! (rule 4) cannot happen. The quiet counter is reset by every goose move,
//! so from a position whose counter is at most 98 with the fox to move
//! (99 with the geese) it never reaches 100 and the fifty-move rule
//! (rule 5) cannot end the game either. Every game ends
//! by rules 1 and 3 with a winner, and the value of a position is a
//! function of the state (fox point, geese set, side to move) alone: the
//! state fits in a `u64`.
//!
//! # The search
//!
//! "Does the fox win?" is a boolean game on that DAG: a fox node is won for
//! the fox if some move leads to a fox win, a geese node if every move does.
//! [`DagSolver`] answers it by depth-first search that stops at the first
//! deciding child (a win for the side to move), with
//!
//! - a table of solved states ([`WinTable`]): each entry is a whole state
//!   (no hashing collisions can give a wrong value) with its value, kept
//!   under left-right mirroring (a mirrored state has the same value);
//!   entries of small subtrees are replaced first when a bucket is full,
//!   which only costs time, never exactness, since every stored value is
//!   history-free;
//! - enhanced transposition cutoffs: a child already known to win for the
//!   side to move decides the node before any search;
//! - move ordering: for the geese, moves after which the fox cannot walk
//!   to a free point (below) first, then those that leave it the fewest
//!   captures, the smallest region to walk in and the fewest moves; for
//!   the fox, captures first (longest chain first), then the steps that
//!   leave it the shortest walk to a free point, lowest row first;
//! - one exact shortcut, the *free fox*. Geese only step forward, so the
//!   points a goose can still reach are the forward cone of its point;
//!   outside the union of the cones no goose will ever stand. Call a point
//!   *free* when it lies outside that union and so does one of its
//!   neighbours. A fox on a free point, or next to one, wins: it steps
//!   onto the free point (no goose can block it) and then back and forth
//!   between two points no goose can reach, so it is never shut in, while
//!   the geese, whose every move raises their summed rows, run out of
//!   moves or of geese. The cones and the fox's neighbours are read off
//!   the rules engine's own move generation (`Steps`), not a second copy
//!   of the board's lines.
//!
//! Nothing else is assumed: terminal positions are judged by the rules
//! engine ([`Position::material_outcome`], no legal move), and moves come
//! from [`Position::legal_moves`]. Tests compare the values with plain
//! minimax and with the df-pn solver on random small positions, and
//! [`DagSolver::replay_lines`] checks a proven value by playing games over
//! the real rules ([`Game`], with its whole history).

pub use crate::replay::ReplayStats;
use crate::replay::{moves_or_start, LineFailure};
use crate::value::Value;
use halatafl_rules::{Bitboard, Game, Move, Point, Position, Side, Variant, FIFTY_MOVE_PLIES};
use std::time::{Duration, Instant};
use thiserror::Error;

/// What the DAG method cannot do, and bad settings.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DagError {
    /// The position's variant is not the one game the method is sound for
    /// (module docs); holds the variant's name.
    #[error("the DAG and retrograde methods need classic Fox and Geese without sideways steps (where no draw is possible); this is {0}: use the df-pn method")]
    Variant(String),
    /// The quiet counter is high enough for the fifty-move rule to draw,
    /// so the value would depend on more than the state.
    #[error("quiet counter {0}: the fifty-move rule can still draw here; the DAG and retrograde methods need at most 98 with the fox to move, 99 with the geese (use the df-pn method)")]
    Quiet(u16),
    /// A table size outside 1 to 65536 MiB.
    #[error("--tt-mb {0}: the table size must be 1 to 65536 MiB")]
    TableSize(usize),
    /// A node budget of 0, which could prove nothing.
    #[error("--budget-nodes 0: the node budget must be at least 1")]
    Budget,
    /// A table larger than the memory available now: refused with a
    /// message rather than aborting on allocation.
    #[error("--tt-mb {asked}: more than the {available} MiB of memory this machine has available; give at most that")]
    Memory {
        /// The size asked for, in MiB.
        asked: usize,
        /// What the system reports available, in MiB.
        available: u64,
    },
    /// A replayed line contradicts the solved value: a bug, reported with
    /// the line that shows it.
    #[error("line {line}, after {moves}: {what}")]
    Replay {
        /// The line (game) number, from 1.
        line: usize,
        /// The moves played on it so far.
        moves: String,
        /// What went wrong there.
        what: String,
    },
    /// A position on a replayed line was not solved within the node budget
    /// (line 0: the starting position itself).
    #[error(
        "line {line}, after {moves}: the node budget ran out while choosing the winner's move"
    )]
    ReplayBudget {
        /// The line (game) number, from 1; 0 for the starting position.
        line: usize,
        /// The moves played on it so far.
        moves: String,
    },
}

/// Settings of a DAG solve. Every default is here.
#[derive(Clone, Debug, PartialEq)]
pub struct DagConfig {
    /// Most positions to expand in one solve.
    pub budget_nodes: u64,
    /// Table size in MiB (8 bytes an entry).
    pub tt_mib: usize,
}

impl Default for DagConfig {
    fn default() -> DagConfig {
        DagConfig {
            budget_nodes: 10_000_000,
            tt_mib: 256,
        }
    }
}

/// What one solve found and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct DagSolution {
    /// The winner, or `None` when the budget ran out first.
    pub winner: Option<Side>,
    /// A winning move where the side to move wins.
    pub best: Option<Move>,
    /// Positions expanded (table hits and free-fox leaves not counted).
    pub nodes: u64,
    /// Wall-clock time of the solve.
    pub elapsed: Duration,
    /// The table after the solve (it is kept across solves).
    pub table: DagTableStats,
}

/// Table use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DagTableStats {
    /// Slots in the table.
    pub capacity: u64,
    /// Slots holding a solved state.
    pub used: u64,
    /// Entries overwritten by others (a full bucket).
    pub replaced: u64,
    /// Bytes of the table.
    pub bytes: u64,
}

const FOX_SHIFT: u32 = 49;
const SIDE_BIT: u64 = 1 << 55;
const WIN_BIT: u64 = 1 << 56;
const WORK_SHIFT: u32 = 57;
const STATE_BITS: u64 = (1 << 56) - 1;
const BUCKET: usize = 8;

/// The state of a position as 56 bits: geese (49), fox point (6), geese to
/// move (1); the lesser of the position's and its mirror image's.
fn state_key(p: &Position) -> u64 {
    let raw = |geese: Bitboard, foxes: Bitboard| {
        let fox = foxes.0.trailing_zeros() as u64;
        let side = if p.side() == Side::Geese { SIDE_BIT } else { 0 };
        geese.0 | (fox << FOX_SHIFT) | side
    };
    raw(p.geese(), p.foxes()).min(raw(p.geese().mirror(), p.foxes().mirror()))
}

/// A table of solved states: buckets of eight `u64` entries (one cache
/// line), each a whole state key, its value (does the fox win?) and the
/// log₂ of the nodes its search took; 0 marks an empty slot (a real state
/// has geese, so its key is never 0).
pub struct WinTable {
    slots: Vec<u64>,
    buckets: u64,
    used: u64,
    replaced: u64,
}

impl WinTable {
    fn new(mib: usize) -> WinTable {
        let buckets = ((mib as u64) << 20) / (8 * BUCKET as u64);
        let buckets = buckets.max(1);
        WinTable {
            slots: vec![0; (buckets as usize) * BUCKET],
            buckets,
            used: 0,
            replaced: 0,
        }
    }

    fn bucket(&self, key: u64) -> usize {
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (((h >> 32) * self.buckets) >> 32) as usize * BUCKET
    }

    /// Does the fox win this state, if known.
    fn get(&self, key: u64) -> Option<bool> {
        let b = self.bucket(key);
        self.slots[b..b + BUCKET]
            .iter()
            .find(|&&e| e != 0 && e & STATE_BITS == key)
            .map(|&e| e & WIN_BIT != 0)
    }

    fn put(&mut self, key: u64, fox_wins: bool, nodes: u64) {
        let work = (64 - nodes.leading_zeros() as u64).min(127);
        let entry = key | if fox_wins { WIN_BIT } else { 0 } | (work << WORK_SHIFT);
        let b = self.bucket(key);
        let bucket = &mut self.slots[b..b + BUCKET];
        if let Some(e) = bucket.iter_mut().find(|e| **e & STATE_BITS == key) {
            *e = entry;
            return;
        }
        if let Some(e) = bucket.iter_mut().find(|e| **e == 0) {
            *e = entry;
            self.used += 1;
            return;
        }
        let least = bucket
            .iter_mut()
            .min_by_key(|e| **e >> WORK_SHIFT)
            .expect("a bucket has slots");
        if *least >> WORK_SHIFT <= work {
            *least = entry;
            self.replaced += 1;
        }
    }

    fn stats(&self) -> DagTableStats {
        DagTableStats {
            capacity: self.slots.len() as u64,
            used: self.used,
            replaced: self.replaced,
            bytes: self.slots.len() as u64 * 8,
        }
    }
}

/// The budget ran out: unwinds the search without storing anything.
struct OutOfBudget;

/// The free-fox rule (module docs) for both boards, for this module's
/// search and the df-pn search's leaves.
pub(crate) struct FreeFox([Steps; 2]);

impl FreeFox {
    pub(crate) fn new() -> FreeFox {
        FreeFox([Steps::new(false), Steps::new(true)])
    }

    fn steps(&self, p: &Position) -> &Steps {
        &self.0[p.variant().corner_links as usize]
    }

    /// Whether the fox wins `p` by the free-fox rule. Only where no draw
    /// can happen ([`check_position`]): with sideways steps a free fox
    /// still cannot be shut in, but the geese can shuffle to a draw.
    pub(crate) fn fox_wins(&self, p: &Position) -> bool {
        check_position(p).is_ok() && self.steps(p).fox_free(p)
    }
}

/// Stack of the search thread: a frame per ply (a move list each), and a
/// line can be a few hundred plies long.
const STACK_BYTES: usize = 256 << 20;

/// The solver: a table kept across solves, a node budget per solve.
pub struct DagSolver {
    config: DagConfig,
    table: WinTable,
    nodes: u64,
    limit: u64,
    free_fox: FreeFox,
}

/// Whether `position` is one the DAG method answers exactly.
pub fn check_position(position: &Position) -> Result<(), DagError> {
    let v = position.variant();
    if !v.no_position_recurs() {
        return Err(DagError::Variant(v.to_string()));
    }
    // A fox step adds one to the counter, a goose move resets it: the game
    // never reaches the fifty-move draw if the fox moves at 98 at most.
    let most = match position.side() {
        Side::Foxes => FIFTY_MOVE_PLIES - 2,
        Side::Geese => FIFTY_MOVE_PLIES - 1,
    };
    if position.quiet() > most {
        return Err(DagError::Quiet(position.quiet()));
    }
    Ok(())
}

/// The board's lines as the free-fox rule needs them, read off
/// [`Position::legal_moves`] on one board (plain or with corner links).
struct Steps {
    /// Points a goose on a point may ever reach (the point included).
    cone: [Bitboard; 49],
    /// Points the fox may step to from a point on an empty board.
    fox: [Bitboard; 49],
}

impl Steps {
    fn new(corner_links: bool) -> Steps {
        let variant = Variant::classic(17, false)
            .expect("17 geese is a classic setting")
            .with_corner_links(corner_links);
        let targets = |foxes: Bitboard, geese: Bitboard, side: Side| {
            let p = Position::new(variant, foxes, geese, side, 0).expect("one fox, one goose");
            p.legal_moves()
                .iter()
                .fold(Bitboard::EMPTY, |b, m| b.with(m.to()))
        };
        let mut goose_steps = [Bitboard::EMPTY; 49];
        let mut fox = [Bitboard::EMPTY; 49];
        for q in Point::all() {
            let here = Bitboard::EMPTY.with(q);
            fox[q.index()] = targets(here, Bitboard::EMPTY, Side::Foxes);
            // The fox may stand on a target: the union over fox points has them all.
            for f in Point::all().filter(|&f| f != q) {
                goose_steps[q.index()] |= targets(Bitboard::EMPTY.with(f), here, Side::Geese);
            }
        }
        // Steps go up a row, so the top rows' cones are complete first.
        let mut cone = [Bitboard::EMPTY; 49];
        for q in Point::all().collect::<Vec<_>>().into_iter().rev() {
            cone[q.index()] =
                goose_steps[q.index()].fold(Bitboard::EMPTY.with(q), |c, t| c | cone[t.index()]);
        }
        Steps { cone, fox }
    }

    /// Steps the fox needs to walk (through empty points, jumps aside) to
    /// a point next to a free point, where it is free; 50 if it cannot.
    fn walk_to_freedom(&self, p: &Position) -> u32 {
        let free = self.free_points(p);
        let empty = p.empty();
        let near_free = free.fold(free, |b, q| b | self.fox[q.index()]);
        let mut reached = p.foxes();
        for distance in 0..33 {
            if (reached & near_free).any() {
                return distance;
            }
            let grown = reached.fold(reached, |r, q| r | (self.fox[q.index()] & empty));
            if grown == reached {
                break;
            }
            reached = grown;
        }
        50
    }

    /// The points the fox can walk to through empty points (jumps aside),
    /// its own included: the rules crate's flood fill over no jumpable
    /// points ([`Geometry::reachable`](halatafl_rules::geometry::Geometry::reachable)),
    /// whose lines are the steps `fox` was read from.
    fn fox_region(&self, p: &Position) -> Bitboard {
        let g = halatafl_rules::geometry::Geometry::get(p.variant().corner_links);
        p.foxes() | g.reachable(p.foxes(), p.empty(), Bitboard::EMPTY)
    }

    /// Points no goose can reach again with a neighbour no goose can reach
    /// either: a fox that gets there is free (module docs).
    fn free_points(&self, p: &Position) -> Bitboard {
        let reach = p
            .geese()
            .fold(Bitboard::EMPTY, |c, g| c | self.cone[g.index()]);
        let open = Bitboard::BOARD & !reach;
        open.filter(|q| (self.fox[q.index()] & open).any())
            .fold(Bitboard::EMPTY, |b, q| b.with(q))
    }

    /// The free fox (module docs): on a free point, or next to one.
    fn fox_free(&self, p: &Position) -> bool {
        let fox = p.foxes().0.trailing_zeros() as usize;
        (p.foxes() | self.fox[fox]) & self.free_points(p) != Bitboard::EMPTY
    }
}

impl DagSolver {
    /// A solver with an empty table of `config.tt_mib` MiB, checked against
    /// the memory available before it is allocated.
    pub fn new(config: DagConfig) -> Result<DagSolver, DagError> {
        if !(1..=65536).contains(&config.tt_mib) {
            return Err(DagError::TableSize(config.tt_mib));
        }
        if config.budget_nodes == 0 {
            return Err(DagError::Budget);
        }
        crate::check_table_memory(config.tt_mib)
            .map_err(|(asked, available)| DagError::Memory { asked, available })?;
        let table = WinTable::new(config.tt_mib);
        Ok(DagSolver {
            config,
            table,
            nodes: 0,
            limit: 0,
            free_fox: FreeFox::new(),
        })
    }

    /// The table's use so far, over every solve.
    pub fn table_stats(&self) -> DagTableStats {
        self.table.stats()
    }

    /// The winner of `position` (no history needed: it has none that
    /// matters, module docs), within the node budget.
    pub fn solve(&mut self, position: &Position) -> Result<DagSolution, DagError> {
        check_position(position)?;
        let started = Instant::now();
        self.nodes = 0;
        self.limit = self.config.budget_nodes;
        let result = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(STACK_BYTES)
                .spawn_scoped(s, || self.root(position))
                .expect("a thread starts")
                .join()
                .expect("search thread")
        });
        let (winner, best) = match result {
            Ok((w, b)) => (Some(w), b),
            Err(OutOfBudget) => (None, None),
        };
        Ok(DagSolution {
            winner,
            best,
            nodes: self.nodes,
            elapsed: started.elapsed(),
            table: self.table.stats(),
        })
    }

    /// The winner and, where the side to move wins, a winning move.
    fn root(&mut self, position: &Position) -> Result<(Side, Option<Move>), OutOfBudget> {
        let fox_wins = self.fox_wins(position)?;
        let winner = if fox_wins { Side::Foxes } else { Side::Geese };
        if winner != position.side() || position.outcome_without_history().is_some() {
            return Ok((winner, None));
        }
        for m in position.legal_moves() {
            let mut child = *position;
            child.play_unchecked(m);
            if self.fox_wins(&child)? == fox_wins {
                return Ok((winner, Some(m)));
            }
        }
        unreachable!("a won node has a winning move: the search found one")
    }

    /// Does the fox win `p`? Stores every answer in the table.
    fn fox_wins(&mut self, p: &Position) -> Result<bool, OutOfBudget> {
        if p.material_outcome().is_some() {
            // Classic Fox and Geese has no pen: this is rule 1, a fox win.
            return Ok(true);
        }
        let steps = self.free_fox.steps(p);
        if steps.fox_free(p) {
            return Ok(true);
        }
        let key = state_key(p);
        if let Some(v) = self.table.get(key) {
            return Ok(v);
        }
        self.nodes += 1;
        if self.nodes > self.limit {
            return Err(OutOfBudget);
        }
        let start_nodes = self.nodes;
        let mover = p.side();
        let mover_wins = |fox_wins: bool| fox_wins == (mover == Side::Foxes);
        let moves = p.legal_moves();
        // Children in search order, with what the table already knows.
        let mut order: Vec<(i32, Position)> = Vec::with_capacity(moves.len());
        let mut decided = None;
        for &m in &moves {
            let mut child = *p;
            child.play_unchecked(m);
            let known = if child.material_outcome().is_some() || steps.fox_free(&child) {
                Some(true)
            } else {
                self.table.get(state_key(&child))
            };
            match known {
                Some(v) if mover_wins(v) => {
                    decided = Some(v);
                    break;
                }
                Some(_) => continue,
                None => order.push((move_score(steps, m, &child), child)),
            }
        }
        // No move at all, or every move known lost: the mover loses.
        let value = match decided {
            Some(v) => v,
            None => {
                order.sort_by_key(|&(score, _)| score);
                let mut value = mover == Side::Geese;
                for (_, child) in &order {
                    let v = self.fox_wins(child)?;
                    if mover_wins(v) {
                        value = v;
                        break;
                    }
                }
                value
            }
        };
        self.table.put(key, value, self.nodes - start_nodes + 1);
        Ok(value)
    }

    /// Plays `lines` games from `position` over the real rules ([`Game`],
    /// whole history) with the shared checker of [`crate::replay`]: the
    /// proven winner chooses a move the solver holds as winning, the loser
    /// a pseudo-random legal move (seeded); every position on the way must
    /// have the claimed winner (solved again), and every game must end with
    /// that winner by the rules engine's verdict.
    pub fn replay_lines(
        &mut self,
        position: &Position,
        lines: usize,
        seed: u64,
    ) -> Result<ReplayStats, DagError> {
        check_position(position)?;
        let solution = self.solve(position)?;
        if solution.winner.is_none() {
            return Err(DagError::ReplayBudget {
                line: 0,
                moves: "the start".into(),
            });
        }
        let mut oracle = DagLines {
            solver: self,
            best: None,
        };
        crate::replay::check_lines(&mut oracle, position, lines, seed, |_, _| {})
            .map(|(stats, _)| stats)
    }
}

/// The DAG search as a line checker's oracle: each position solved again.
struct DagLines<'a> {
    solver: &'a mut DagSolver,
    /// The winning move of the position solved last.
    best: Option<Move>,
}

impl crate::replay::LineOracle for DagLines<'_> {
    type Error = DagError;

    fn value(&mut self, game: &Game, _: bool, line: usize) -> Result<Option<Value>, DagError> {
        let s = self.solver.solve(game.position())?;
        self.best = s.best;
        match s.winner {
            Some(w) => Ok(Some(Value::Win(w))),
            None => Err(DagError::ReplayBudget {
                line,
                moves: moves_or_start(game),
            }),
        }
    }

    fn children(&mut self, _: &Position) -> Result<Option<Vec<(Move, Value)>>, DagError> {
        Ok(None)
    }

    fn winning_move(
        &mut self,
        _: &Position,
        _: Option<&[(Move, Value)]>,
    ) -> Result<Move, DagError> {
        Ok(self.best.expect("the winner to move has a winning move"))
    }
}

impl From<LineFailure> for DagError {
    fn from(f: LineFailure) -> DagError {
        DagError::Replay {
            line: f.line,
            moves: f.moves,
            what: f.what,
        }
    }
}

/// Search order (lower first). Geese: moves that leave the fox no walk to
/// a free point first, then the fewer captures the fox has after the move,
/// the smaller the region it can walk in, the fewer its moves. Fox: captures first,
/// the longest chain first, then the steps after which it has the shortest
/// walk to freedom, then those to the lowest row.
fn move_score(steps: &Steps, m: Move, child: &Position) -> i32 {
    match child.side() {
        Side::Foxes => {
            let replies = child.legal_moves();
            let captures = replies.iter().filter(|r| r.is_capture()).count();
            let region = steps.fox_region(child);
            let escape = (region & steps.free_points(child)).any() as usize;
            (2000 * escape + 1000 * captures + 10 * region.count() as usize + replies.len()) as i32
        }
        Side::Geese => {
            if m.is_capture() {
                -1000 - 10 * m.jumps() as i32
            } else {
                10 * steps.walk_to_freedom(child) as i32 + m.to().row()
            }
        }
    }
}
