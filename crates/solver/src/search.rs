//! The df-pn search itself (see the crate docs for the formulas and why
//! the answers are exact).

use crate::dag::FreeFox;
use crate::march::March;
use crate::order::{rank_factor, ranks, MoveOrder};
use crate::tt::{Known, Searcher, Table, TableStats};
use crate::value::Value;
use crate::SolveError;
use halatafl_rules::{Game, Move, Position, Side, FIFTY_MOVE_PLIES};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most sideways goose steps the restricted search may allow (the
/// table key's room for the count).
pub const MAX_SIDEWAYS: u8 = 63;
/// Infinity for proof and disproof numbers.
const INF: u64 = 1 << 62;
/// Dependency tag of a result that rests on no repetition above its node.
const INDEPENDENT: u32 = u32::MAX;

/// Settings of a solve. Every default is here.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverConfig {
    /// Most nodes (expanded positions) over both boolean searches.
    pub budget_nodes: u64,
    /// Transposition table size in MiB (split between threads).
    pub tt_mib: usize,
    /// 1 runs the two boolean searches one after the other (sharing one
    /// table); 2 runs them at once, each with half the table and budget.
    pub threads: usize,
    /// The ε of the 1+ε trick, in percent.
    pub epsilon_percent: u64,
    /// How a new leaf's numbers start (see [`LeafInit`]).
    pub init: LeafInit,
    /// With a move order ([`Solver::with_order`]): a new leaf of rank `r`
    /// among its parent's moves starts at `order_base^r` times its
    /// estimate ([`crate::order`]). 1 ignores the order.
    pub order_base: u64,
    /// How a node's summed number (disproof number at an OR node, proof
    /// number at an AND node) adds up its children's (see [`ProofSum`]).
    pub sum: ProofSum,
    /// Where the geese prove a win and may step sideways (Two Foxes; the
    /// classic game with sideways steps): the percentage of the budget
    /// spent first on a restricted search, where the geese step forward
    /// and sideways at most `forward_sideways` times ([`Solver::prove`]);
    /// the full search gets the rest. 0 turns it off.
    pub forward_share_percent: u64,
    /// The sideways goose steps the restricted search allows on any line.
    pub forward_sideways: u8,
    /// With a move order: the restricted search tries only the geese's
    /// best-ranked `forward_width` moves at each of their turns (0: all).
    /// Leaving out some of the prover's moves keeps a proof a proof.
    pub forward_width: usize,
    /// Two Foxes: where the geese prove a win, the states a leaf's march
    /// question may expand ([`crate::march`]: the geese step behind a wall
    /// the foxes cannot jump, a win proven without searching the foxes'
    /// moves). 0 turns it off.
    pub march_budget: u64,
    /// The sideways goose steps a march may take on any line (at most
    /// [`crate::march::MAX_MARCH_SIDEWAYS`]; the geese of real games often
    /// fill the pen's last points from the side).
    pub march_sideways: u8,
    /// Where the geese prove: at a position where they move, the move
    /// that won a position with the same geese before (any foxes) ranks
    /// first and every other move this many ranks lower than the move
    /// order puts it (Kawano's simulation, as a hint: a fox's other move
    /// seldom changes the geese's plan). 0 (off) by default: 6 proved
    /// deeper on one set of the shipped network's games and not on a fresh
    /// one (experiments/README.md, "the geese's plan").
    pub geese_plan: u8,
}

/// How the summed number of a node (the disproof number where the prover
/// moves, the proof number where the other side does) comes from its
/// children's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProofSum {
    /// df-pn's sum over the children.
    #[default]
    Standard,
    /// Weak proof numbers (Ueda, Hashimoto, Hashimoto & Iida 2008, "Weak
    /// proof-number search"): the largest child's number plus one for each
    /// other unsolved child. In a graph with many transpositions the sum
    /// counts a shared descendant once per path to it, so the numbers of
    /// nodes whose lines merge (long goose manoeuvres, whose moves can come
    /// in any order) grow far beyond the work they need and the search
    /// avoids them; the weak number grows with the branching alone. A new
    /// leaf's estimate follows the same rule: its own estimate plus one per
    /// further move, where the sum takes the estimate once per move.
    Weak,
}

impl std::str::FromStr for ProofSum {
    type Err = String;

    fn from_str(text: &str) -> Result<ProofSum, String> {
        parse_named(
            text,
            "proof-number sum",
            &[("standard", ProofSum::Standard), ("weak", ProofSum::Weak)],
        )
    }
}

/// The one of `choices` named `text`; the error names `what` was asked
/// for and lists the names.
fn parse_named<T: Copy>(text: &str, what: &str, choices: &[(&str, T)]) -> Result<T, String> {
    choices
        .iter()
        .find(|(name, _)| *name == text)
        .map(|&(_, value)| value)
        .ok_or_else(|| {
            let names: Vec<String> = choices.iter().map(|(n, _)| format!("`{n}`")).collect();
            format!("unknown {what} `{text}`: expected {}", names.join(" or "))
        })
}

/// How a new leaf's proof and disproof numbers start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LeafInit {
    /// df-pn's mobility initialisation: `(1, k)` where the prover moves,
    /// `(k, 1)` where the other side does, for `k` legal moves.
    Mobility,
    /// Mobility times each side's distance to its material or pen goal
    /// (df-pn+, Nagai & Imai 2002, with a game-specific estimate): the
    /// proof number grows with the moves the prover still needs (geese to
    /// take, empty pen points to fill), the disproof number with the moves
    /// the other side needs, so the search spends its nodes first where a
    /// side is closest to winning. See [`goal_distance`].
    #[default]
    Distance,
    /// [`LeafInit::Distance`] with the geese's shut-in estimate taken from
    /// the foxes' region, not their next moves: the empty points the foxes
    /// could reach by steps and jumps if the geese stood still
    /// ([`fox_region`]). A fox in a pocket of two empty points has one or
    /// two moves whichever goose moves, so the distance start gives every
    /// goose move the same estimate and the search goes wide; the region
    /// shrinks with each goose move that closes the pocket and jumps to the
    /// cap with one that opens a way out, so the nodes go first to the
    /// moves that close it. See [`goal_distance_with`].
    Region,
}

impl std::str::FromStr for LeafInit {
    type Err = String;

    fn from_str(text: &str) -> Result<LeafInit, String> {
        parse_named(
            text,
            "leaf initialisation",
            &[
                ("mobility", LeafInit::Mobility),
                ("distance", LeafInit::Distance),
                ("region", LeafInit::Region),
            ],
        )
    }
}

/// An estimate of the moves `side` still needs to win `p`, at least 1,
/// capped at 8 so no estimate swamps the numbers the search learns: for
/// the foxes, the geese to take before fewer than the variant's minimum
/// are left (each move takes at least one); for the geese, the nearer of
/// their two wins: the pen points not yet filled by a goose (Two Foxes;
/// each goose move fills at most one), and shutting the foxes in, counted
/// as half the foxes' steps and jumps (a goose move can close a point to
/// both foxes at once). Any positive estimate keeps df-pn exact; a good
/// one only spends the nodes where a proof is nearer.
pub fn goal_distance(p: &Position, side: Side) -> u64 {
    goal_distance_with(p, side, LeafInit::Distance)
}

/// [`goal_distance`] with the geese's shut-in estimate of `init`: the
/// foxes' region for [`LeafInit::Region`] (the empty points they could
/// reach, [`fox_region`]), half their steps and jumps otherwise; with
/// `Region` the pen counts only while no fox holds a point of it. The
/// foxes' estimate is the same for both.
pub fn goal_distance_with(p: &Position, side: Side, init: LeafInit) -> u64 {
    let v = p.variant();
    let geese = u64::from(p.geese().count());
    let d = match side {
        Side::Foxes => {
            let minimum: u64 = if v.is_classic() { 4 } else { 9 };
            geese.saturating_sub(minimum - 1)
        }
        Side::Geese => {
            let shut = match init {
                LeafInit::Region => fox_region(p),
                _ => fox_freedom(p).div_ceil(2),
            };
            if v.has_pen() {
                let mut pen = u64::from(9 - (p.geese() & halatafl_rules::PEN).count());
                if init == LeafInit::Region && (p.foxes() & halatafl_rules::PEN).count() > 0 {
                    // A fox on a pen point must step off it before a goose
                    // can fill it, and only the foxes choose when: the
                    // geese cannot count on the pen while a fox holds a
                    // point of it (with the geese one point short and a fox
                    // shut in on it, the pen count alone would call every
                    // position one move from the end). The region decides.
                    pen = 8;
                }
                pen.min(shut)
            } else {
                shut
            }
        }
    };
    d.clamp(1, 8)
}

/// The empty points the foxes could reach, whoever is to move, if the
/// geese stood still: steps to empty points and jumps over a goose to an
/// empty point, from each fox and from every point reached
/// ([`Geometry::reachable`](halatafl_rules::geometry::Geometry::reachable)
/// over the geese). 0 for foxes shut in.
pub fn fox_region(p: &Position) -> u64 {
    let g = halatafl_rules::geometry::Geometry::get(p.variant().corner_links);
    u64::from(g.reachable(p.foxes(), p.empty(), p.geese()).count())
}

/// The foxes' steps and jumps (each jump counted once, chains not
/// followed), whoever is to move.
fn fox_freedom(p: &Position) -> u64 {
    use halatafl_rules::geometry::{Geometry, NO_POINT};
    let g = Geometry::get(p.variant().corner_links);
    let (empty, geese) = (p.empty(), p.geese());
    let mut n = 0;
    for fox in p.foxes() {
        let i = fox.index();
        n += u64::from((g.adjacent[i] & empty).count());
        for d in 0..8 {
            let (over, land) = (g.jump_over[d][i], g.jump_land[d][i]);
            if over != NO_POINT && geese.0 >> over & 1 == 1 && empty.0 >> land & 1 == 1 {
                n += 1;
            }
        }
    }
    n
}

impl Default for SolverConfig {
    fn default() -> SolverConfig {
        SolverConfig {
            budget_nodes: 10_000_000,
            tt_mib: 256,
            threads: 1,
            epsilon_percent: 25,
            init: LeafInit::default(),
            order_base: 2,
            sum: ProofSum::default(),
            forward_share_percent: 50,
            forward_sideways: 0,
            forward_width: 0,
            march_budget: 10,
            march_sideways: 2,
            geese_plan: 0,
        }
    }
}

impl SolverConfig {
    /// Refuses settings out of range, naming the command-line option;
    /// [`Solver::new`] calls it.
    pub fn validate(&self) -> Result<(), SolveError> {
        if !(1..=2).contains(&self.threads) {
            return Err(SolveError::Threads(self.threads));
        }
        if !(1..=65536).contains(&self.tt_mib) {
            return Err(SolveError::TableSize(self.tt_mib));
        }
        if self.budget_nodes == 0 {
            return Err(SolveError::Budget);
        }
        if !(1..=64).contains(&self.order_base) {
            return Err(SolveError::OrderBase(self.order_base));
        }
        if self.forward_share_percent > 100 {
            return Err(SolveError::ForwardShare(self.forward_share_percent));
        }
        if self.forward_sideways > MAX_SIDEWAYS {
            return Err(SolveError::ForwardSideways(self.forward_sideways));
        }
        if self.march_sideways > crate::march::MAX_MARCH_SIDEWAYS {
            return Err(SolveError::MarchSideways(self.march_sideways));
        }
        Ok(())
    }
}

/// The end of one boolean search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchOutcome {
    /// The prover wins.
    Proven,
    /// The prover does not win.
    Disproven,
    /// The budget ran out at these root numbers.
    Unknown {
        /// Proof number: the search's estimate of the work a proof still
        /// needs.
        pn: u64,
        /// Disproof number: the same for a disproof.
        dn: u64,
    },
}

/// A solve's answer and its cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// The value, or `None` when the budget ran out first.
    pub value: Option<Value>,
    /// A move that keeps the value (for a loss: some move), when known.
    pub best: Option<Move>,
    /// The boolean searches run: (prover, outcome).
    pub searches: Vec<(Side, SearchOutcome)>,
    /// Positions expanded.
    pub nodes: u64,
    /// Wall-clock time of the solve.
    pub elapsed: Duration,
    /// The table after the solve (it is kept across solves).
    pub table: TableStats,
}

/// One child in a node's local array.
#[derive(Clone, Copy)]
struct Child {
    mv: Move,
    pn: u64,
    dn: u64,
    /// Path index of the repetition a disproof rests on, or [`INDEPENDENT`].
    dep: u32,
    /// The numbers are a new leaf's estimate, which a move order shapes.
    fresh: bool,
}

/// A node's summed number from its children's ([`ProofSum`]): 0 when every
/// child's is 0, ∞ when some child's is.
fn summed(numbers: impl Iterator<Item = u64>, sum: ProofSum) -> u64 {
    match sum {
        ProofSum::Standard => numbers.fold(0, add),
        ProofSum::Weak => {
            let (mut largest, mut unsolved) = (0, 0);
            for n in numbers.filter(|&n| n > 0) {
                largest = largest.max(n);
                unsolved += 1;
            }
            if unsolved == 0 {
                0
            } else {
                add(largest, unsolved - 1)
            }
        }
    }
}

#[inline]
fn add(a: u64, b: u64) -> u64 {
    if a >= INF || b >= INF {
        INF
    } else {
        (a + b).min(INF - 1)
    }
}

/// A solver: a table kept across solves (so solving the children of a
/// solved position is cheap) and a node budget per solve.
pub struct Solver {
    config: SolverConfig,
    table: Table,
    game: Game,
    prover: Side,
    nodes: u64,
    limit: u64,
    stop: Option<Arc<AtomicBool>>,
    /// Classic Fox and Geese without sideways steps: a leaf where the fox
    /// is free is a fox win (crate docs).
    free_fox: FreeFox,
    /// Ranks the mover's moves for new leaves' numbers ([`crate::order`]).
    order: Option<Arc<dyn MoveOrder>>,
    /// The ranks of the moves of positions already ranked, by Zobrist hash: df-pn
    /// enters a node many times, and a network call costs far more than a
    /// node. A hash collision can only give a poor order, never a wrong
    /// answer; a cached entry of the wrong length is ranked again.
    order_cache: HashMap<u64, Box<[u8]>>,
    /// Positions ranked by [`Solver::order`] (cache misses).
    ranked: u64,
    /// In the geese's restricted search: the sideways steps they have left
    /// at the current position; `None` in an unrestricted search.
    sideways_left: Option<u8>,
    /// Two Foxes, the geese proving: leaves won by a march ([`crate::march`]).
    march: March,
    /// Leaves the march proved, over every solve.
    marched: u64,
    /// With [`SolverConfig::geese_plan`]: the move that won the last
    /// position proven where the geese prove and move, by its geese
    /// (bitboard), kept across solves like the table. A stale entry (the
    /// foxes elsewhere) only orders a move first that does not win.
    plan: HashMap<u64, Move>,
}

/// Entries of the order cache before it is emptied (a bound on its memory:
/// about 60 bytes an entry).
const ORDER_CACHE_ENTRIES: usize = 1 << 22;

impl Solver {
    /// A solver with an empty table of `config.tt_mib` MiB, after checking
    /// the settings and the memory available.
    pub fn new(config: SolverConfig) -> Result<Solver, SolveError> {
        config.validate()?;
        crate::check_table_memory(config.tt_mib)
            .map_err(|(asked, available)| SolveError::Memory { asked, available })?;
        let table = Table::new(config.tt_mib);
        let march = March::new(config.march_budget, config.march_sideways);
        Ok(Solver {
            config,
            table,
            game: Game::new(Position::start(halatafl_rules::Variant::two_foxes())),
            prover: Side::Foxes,
            nodes: 0,
            limit: 0,
            stop: None,
            free_fox: FreeFox::new(),
            order: None,
            order_cache: HashMap::new(),
            ranked: 0,
            sideways_left: None,
            march,
            marched: 0,
            plan: HashMap::new(),
        })
    }

    /// The solver with new leaves' numbers shaped by `order`'s ranking of
    /// the mover's moves ([`crate::order`]): the same answers, in fewer
    /// nodes where the ranking is good.
    pub fn with_order(mut self, order: Arc<dyn MoveOrder>) -> Solver {
        self.order = Some(order);
        self
    }

    /// Positions ranked by the move order so far (each once while it stays
    /// in the order cache), over every solve.
    pub fn ranked_positions(&self) -> u64 {
        self.ranked
    }

    /// The march's settings (the config's): states per question, sideways
    /// steps.
    pub(crate) fn march_settings(&self) -> (u64, u8) {
        (self.config.march_budget, self.config.march_sideways)
    }

    /// Leaves proven by the geese's march ([`crate::march`]), over every
    /// solve.
    pub fn marched_leaves(&self) -> u64 {
        self.marched
    }

    /// The table's use so far, over every solve.
    pub fn table_stats(&self) -> TableStats {
        self.table.stats()
    }

    /// Whether the free-fox rule gives `position` to the fox (for proof
    /// checking).
    pub(crate) fn free_fox_wins(&self, position: &Position) -> bool {
        self.free_fox.fox_wins(position)
    }

    /// What the table knows of `position` for `prover` (for proof checking).
    pub fn known(&self, position: &Position, prover: Side) -> crate::tt::Known {
        self.table.lookup(position, Searcher::of(prover))
    }

    /// The value of `position` (with no history), within the budget.
    pub fn solve(&mut self, position: &Position) -> Solution {
        self.solve_expecting(position, None)
    }

    /// [`Solver::solve`] where `likely_winner` is a guess at who wins (say,
    /// the side that won the game the position comes from): its boolean
    /// search runs first with the whole budget, and only if it is
    /// disproven does the other side's search get what is left. Without a
    /// guess the side to move goes first with half the budget, so that a
    /// failed first search leaves the second something. The answer is
    /// exact either way; a good guess spends the nodes on the search that
    /// settles the value instead of on a disproof of the loser, which is
    /// often as hard as the proof itself. With two threads both searches
    /// run at once and the guess changes nothing.
    pub fn solve_expecting(
        &mut self,
        position: &Position,
        likely_winner: Option<Side>,
    ) -> Solution {
        let started = Instant::now();
        let drawless = cannot_draw(position);
        // Where no draw can happen one search decides, and two threads
        // would only run the same search twice.
        if self.config.threads == 2 && !drawless {
            return self.solve_parallel(position, started);
        }
        let budget = self.config.budget_nodes;
        let mover = position.side();
        // The guessed winner first with the whole budget; without a guess
        // the side to move, with half of it where a draw is possible (all
        // of it where none is: then one search decides).
        let (first_prover, first_budget) = match likely_winner {
            Some(winner) => (winner, budget),
            None if drawless => (mover, budget),
            None => (mover, budget / 2),
        };
        let (first, first_best, mut nodes) = self.prove(position, first_prover, first_budget);
        let mut searches = vec![(first_prover, first)];
        let (value, best) = match first {
            // A winning move where the winner moves; where the other side
            // moves the proof has no single move to give.
            SearchOutcome::Proven => (
                Some(Value::Win(first_prover)),
                first_best.filter(|_| first_prover == mover),
            ),
            // No draw: not winning is losing.
            SearchOutcome::Disproven if drawless => (Some(Value::Win(first_prover.other())), None),
            // The first search may pass its budget by a few nodes (each
            // level of the path checks it once); then nothing is left.
            _ if drawless || nodes >= budget => (None, None),
            _ => {
                let second_prover = first_prover.other();
                let (second, second_best, n2) = self.prove(position, second_prover, budget - nodes);
                nodes += n2;
                searches.push((second_prover, second));
                if first_prover == mover {
                    combine(first, second, first_best, second_best, mover)
                } else {
                    combine(second, first, second_best, first_best, mover)
                }
            }
        };
        Solution {
            value,
            best,
            searches,
            nodes,
            elapsed: started.elapsed(),
            table: self.table.stats(),
        }
    }

    /// Both searches at once, each on its own thread with its own half of
    /// the table and budget; a proof in one stops the other.
    fn solve_parallel(&mut self, position: &Position, started: Instant) -> Solution {
        let mover = position.side();
        let half = SolverConfig {
            tt_mib: (self.config.tt_mib / 2).max(1),
            threads: 1,
            ..self.config.clone()
        };
        let budget = self.config.budget_nodes / 2;
        let stop = Arc::new(AtomicBool::new(false));
        let run = |prover: Side| {
            let mut solver = Solver::new(half.clone()).expect("half a valid config is valid");
            solver.stop = Some(stop.clone());
            solver.order = self.order.clone();
            let (outcome, best, nodes) = solver.prove(position, prover, budget.max(1));
            if outcome == SearchOutcome::Proven {
                stop.store(true, Ordering::Relaxed);
            }
            let counts = (solver.ranked, solver.marched);
            (outcome, best, nodes, solver.table.stats(), counts)
        };
        let ((o1, b1, n1, t1, r1), (o2, b2, n2, t2, r2)) = std::thread::scope(|s| {
            let other = std::thread::Builder::new()
                .stack_size(STACK_BYTES)
                .spawn_scoped(s, || run(mover.other()))
                .expect("a thread starts");
            let mine = std::thread::Builder::new()
                .stack_size(STACK_BYTES)
                .spawn_scoped(s, || run(mover))
                .expect("a thread starts");
            (
                mine.join().expect("search thread"),
                other.join().expect("search thread"),
            )
        });
        self.ranked += r1.0 + r2.0;
        self.marched += r1.1 + r2.1;
        let (value, best) = if o1 == SearchOutcome::Proven {
            (Some(Value::Win(mover)), b1)
        } else {
            combine(o1, o2, b1, b2, mover)
        };
        Solution {
            value,
            best,
            searches: vec![(mover, o1), (mover.other(), o2)],
            nodes: n1 + n2,
            elapsed: started.elapsed(),
            table: TableStats {
                capacity: t1.capacity + t2.capacity,
                used: t1.used + t2.used,
                bytes: t1.bytes + t2.bytes,
                contradictions: t1.contradictions + t2.contradictions,
            },
        }
    }

    /// One boolean search, "does `prover` win `position`?", within `budget`
    /// nodes; runs on a thread with a large stack (paths can be thousands
    /// of plies deep). Returns the outcome, the root move that decided it
    /// (a winning move, or where the prover does not move: a move that
    /// refutes the prover), and the nodes spent.
    pub fn prove(
        &mut self,
        position: &Position,
        prover: Side,
        budget: u64,
    ) -> (SearchOutcome, Option<Move>, u64) {
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(STACK_BYTES)
                .spawn_scoped(s, || self.prove_staged(position, prover, budget))
                .expect("a thread starts")
                .join()
                .expect("search thread")
        })
    }

    /// [`Solver::prove`] on the search thread. Where the geese prove and
    /// could step sideways, a restricted search comes first with its share
    /// of the budget ([`SolverConfig::forward_share_percent`]): the geese
    /// step forward, and sideways only while a count of sideways steps,
    /// `forward_sideways` at the root and one less after each, lasts. The
    /// count is part of the search's position (and of its table key), and
    /// every goose move raises the geese's summed rows or lowers the count
    /// (a capture changes the geese), so no position of that search comes
    /// twice on a line: it has no cycles, and the disproofs that the full
    /// search cannot store, because they rest on a repetition on the path,
    /// are rare in it (a placement can still come back after two sideways
    /// steps, and the repetition rule still applies). The foxes keep all
    /// their moves, so its proof is a proof of the real game, stored as the
    /// geese's. If it proves nothing (the restricted geese do not win, or
    /// its share ran out), the full search runs with the nodes left,
    /// reading those proofs from the table. The share is bounded because a
    /// restricted search that fails rarely fails fast: the geese keep
    /// forward steps to spend long after the one sideways step that wins.
    fn prove_staged(
        &mut self,
        position: &Position,
        prover: Side,
        budget: u64,
    ) -> (SearchOutcome, Option<Move>, u64) {
        let share = budget / 100 * self.config.forward_share_percent
            + budget % 100 * self.config.forward_share_percent / 100;
        if !(share > 0 && prover == Side::Geese && position.variant().sideways) {
            return self.prove_here(position, prover, budget);
        }
        self.sideways_left = Some(self.config.forward_sideways);
        let (outcome, best, spent) = self.prove_here(position, prover, share);
        self.sideways_left = None;
        if outcome == SearchOutcome::Proven {
            return (outcome, best, spent);
        }
        let left = budget.saturating_sub(spent).max(1);
        let (outcome, best, more) = self.prove_here(position, prover, left);
        (outcome, best, spent + more)
    }

    /// The table key of the current search at the current position.
    fn searcher(&self) -> Searcher {
        match self.sideways_left {
            Some(left) => Searcher::RestrictedGeese(left),
            None => Searcher::of(self.prover),
        }
    }

    /// The width the current position's moves are narrowed to
    /// ([`SolverConfig::forward_width`]): where the restricted search's
    /// geese move, with a width and an order to rank by.
    fn narrowed_width(&self) -> Option<usize> {
        let width = self.config.forward_width;
        (width > 0 && self.order.is_some() && self.restricted_geese_move()).then_some(width)
    }

    /// Whether the current position's moves are the restricted geese's.
    fn restricted_geese_move(&self) -> bool {
        self.sideways_left.is_some() && self.game.position().side() == Side::Geese
    }

    /// Plays `mv` on the search's game, counting a sideways goose step of
    /// the restricted search; returns the count before, for
    /// [`Solver::take_back`].
    fn play(&mut self, mv: Move) -> Option<u8> {
        let before = self.sideways_left;
        if self.restricted_geese_move() && mv.from().row() == mv.to().row() {
            self.sideways_left = before.map(|left| left - 1);
        }
        self.game.play_unchecked(mv);
        before
    }

    /// Takes back the last move [`Solver::play`] made.
    fn take_back(&mut self, before: Option<u8>) {
        self.game.undo();
        self.sideways_left = before;
    }

    /// The mover's moves at the current position: all legal moves, or the
    /// forward ones where the restricted search's geese move with no
    /// sideways step left.
    fn moves_here(&self) -> halatafl_rules::MoveList {
        let p = self.game.position();
        if self.sideways_left == Some(0) && p.side() == Side::Geese {
            p.forward_goose_moves()
        } else {
            p.legal_moves()
        }
    }

    /// The number of [`Solver::moves_here`].
    fn move_count_here(&self) -> u64 {
        let p = self.game.position();
        if self.sideways_left == Some(0) && p.side() == Side::Geese {
            p.count_forward_goose_moves()
        } else {
            p.count_legal_moves()
        }
    }

    fn prove_here(
        &mut self,
        position: &Position,
        prover: Side,
        budget: u64,
    ) -> (SearchOutcome, Option<Move>, u64) {
        self.game = Game::new(*position);
        self.prover = prover;
        self.nodes = 0;
        self.limit = budget;
        // Only a game already over is answered without expanding the root.
        // A root the table or the free-fox rule settles is still expanded,
        // so that the answer comes with its move: its children are mostly
        // in the table, and a proven one ends the search at once.
        let moves = self.move_count_here();
        match self.ended(moves) {
            Some(true) => return (SearchOutcome::Proven, None, 0),
            Some(false) => return (SearchOutcome::Disproven, None, 0),
            None => {}
        }
        let (pn, dn, _, children) = self.mid(INF, INF);
        let outcome = if pn == 0 {
            SearchOutcome::Proven
        } else if dn == 0 {
            SearchOutcome::Disproven
        } else {
            SearchOutcome::Unknown { pn, dn }
        };
        let or = position.side() == prover;
        let best = match outcome {
            SearchOutcome::Proven if or => children.iter().find(|c| c.pn == 0),
            SearchOutcome::Disproven if !or => children.iter().find(|c| c.dn == 0),
            _ => None,
        }
        .map(|c| c.mv);
        (outcome, best, self.nodes)
    }

    fn out_of_budget(&self) -> bool {
        self.nodes >= self.limit
            || self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Path index of an earlier occurrence of the current placement, if any.
    /// Only positions since the last capture or forward step can match (see
    /// [`Game::repetitions`]).
    fn repeated_at(&self) -> Option<usize> {
        let positions = self.game.positions();
        let n = positions.len();
        let current = &positions[n - 1];
        let window = (current.quiet() as usize).min(n - 1);
        (2..=window)
            .step_by(2)
            .map(|back| n - 1 - back)
            .find(|&i| positions[i].same_placement(current))
    }

    /// Multiplies each fresh child's own number (the prover's proof number
    /// at an OR node, the other side's disproof number at an AND node) by
    /// its move's rank factor ([`crate::order`]). The moves are ranked once
    /// per position (then read from the cache), and only when some child
    /// is fresh: a node whose children are all known needs no ranking.
    /// `narrowed` holds the ranks of moves [`Solver::searched_moves`] kept
    /// of a longer list, which the cache (keyed by the whole list) cannot
    /// give.
    fn shape_fresh_children(
        &mut self,
        moves: &[Move],
        narrowed: Option<Vec<u8>>,
        children: &mut [Child],
        or: bool,
    ) {
        if !children.iter().any(|c| c.fresh) {
            return;
        }
        let hint = self.plan_hint(or, children);
        let base = self.config.order_base;
        let plan_shift = self.config.geese_plan;
        // Without an order every move ranks 0, and only a plan shapes.
        let move_ranks = match (&narrowed, self.order.clone()) {
            (Some(ranks), _) => Some(ranks.as_slice()),
            (None, Some(order)) => Some(self.move_ranks(&*order, moves)),
            (None, None) if hint.is_some() => None,
            (None, None) => return,
        };
        for (i, c) in children.iter_mut().enumerate() {
            if c.fresh {
                // The plan's move ranks first, every other `geese_plan` lower.
                let rank = move_ranks.map_or(0, |ranks| ranks[i]);
                let rank = match hint {
                    Some(h) if h == i => 0,
                    Some(_) => rank.saturating_add(plan_shift),
                    None => rank,
                };
                let factor = rank_factor(base, rank);
                if or {
                    c.pn *= factor;
                } else {
                    c.dn *= factor;
                }
            }
        }
    }

    /// Whether the geese's plan acts at the current node: on, the geese
    /// proving, and (`or`) the prover to move.
    fn plan_acts(&self, or: bool) -> bool {
        self.config.geese_plan > 0 && or && self.prover == Side::Geese
    }

    /// The index of the fresh child [`Solver::plan`] names at the current
    /// position, where the plan acts.
    fn plan_hint(&self, or: bool, children: &[Child]) -> Option<usize> {
        if !self.plan_acts(or) {
            return None;
        }
        let mv = *self.plan.get(&self.game.position().geese().0)?;
        children.iter().position(|c| c.fresh && c.mv == mv)
    }

    /// The rank of each of `moves` (the current position's) by `order`,
    /// from the cache or ranked now.
    fn move_ranks(&mut self, order: &dyn MoveOrder, moves: &[Move]) -> &[u8] {
        if self.order_cache.len() >= ORDER_CACHE_ENTRIES {
            self.order_cache.clear();
        }
        let position = self.game.position();
        let ranked = &mut self.ranked;
        match self.order_cache.entry(position.hash()) {
            Entry::Occupied(e) if e.get().len() == moves.len() => e.into_mut(),
            entry => {
                let mut scores = Vec::with_capacity(moves.len());
                order.scores(position, moves, &mut scores);
                let fresh_ranks: Box<[u8]> = if scores.len() == moves.len() {
                    ranks(&scores).into()
                } else {
                    // An order that answers for another move list ranks nothing.
                    vec![0; moves.len()].into()
                };
                *ranked += 1;
                entry.insert_entry(fresh_ranks).into_mut()
            }
        }
    }

    /// The moves the search tries at the current position: the mover's
    /// ([`Solver::moves_here`]), and where the restricted search's geese
    /// move with a move order and a width, only their best-ranked
    /// `forward_width`, with the ranks of those kept.
    fn searched_moves(&mut self) -> (halatafl_rules::MoveList, Option<Vec<u8>>) {
        let moves = self.moves_here();
        let width = match self.narrowed_width() {
            Some(width) if moves.len() > width => width,
            _ => return (moves, None),
        };
        let order = self
            .order
            .clone()
            .expect("a width narrows only by an order");
        let ranks = self.move_ranks(&*order, &moves);
        let (kept, kept_ranks) = moves
            .iter()
            .zip(ranks)
            .filter(|&(_, &rank)| usize::from(rank) < width)
            .map(|(&mv, &rank)| (mv, rank))
            .unzip();
        (kept, Some(kept_ranks))
    }

    /// Whether the prover has won (`Some(true)`) or not (`Some(false)`)
    /// where the game is over at the current position by rules 1-3 and 5
    /// (too few geese, the pen filled, no legal move, fifty moves), given
    /// its number of legal `moves`; `None` while it goes on.
    fn ended(&self, moves: u64) -> Option<bool> {
        let p = self.game.position();
        if let Some(outcome) = p.material_outcome() {
            return Some(outcome.winner == Some(self.prover));
        }
        if moves == 0 {
            return Some(p.side().other() == self.prover);
        }
        if p.quiet() >= FIFTY_MOVE_PLIES {
            return Some(false);
        }
        None
    }

    /// Numbers of the current position as a leaf (end rules 1-3 and 5, the
    /// free-fox rule, a repetition on the path, the table, then the leaf
    /// start), the dependency of a disproof, and whether the numbers are a
    /// new leaf's estimate (nothing known of the position) that a move
    /// order may shape.
    fn leaf_fresh(&mut self) -> (u64, u64, u32, bool) {
        let p = *self.game.position();
        let p = &p;
        let win = (0, INF, INDEPENDENT, false);
        let not_win = (INF, 0, INDEPENDENT, false);
        let moves = self.move_count_here();
        if let Some(prover_wins) = self.ended(moves) {
            return if prover_wins { win } else { not_win };
        }
        if self.free_fox.fox_wins(p) {
            return if self.prover == Side::Foxes {
                win
            } else {
                not_win
            };
        }
        if let Some(j) = self.repeated_at() {
            return (INF, 0, j as u32, false);
        }
        match self.table.lookup(p, self.searcher()) {
            Known::Proven => win,
            Known::Disproven => not_win,
            Known::Numbers { pn, dn } => (pn as u64, dn as u64, INDEPENDENT, false),
            // Asked where the foxes move only: the geese's own positions
            // are answered one ply later, by the march of each of their
            // moves, at a fraction of the cost (experiments/README.md).
            // `ended` above has found the game going on.
            Known::Missing
                if self.prover == Side::Geese
                    && p.side() == Side::Foxes
                    && self.march.geese_win_ongoing(p) =>
            {
                self.marched += 1;
                win
            }
            Known::Missing => {
                let (h_pn, h_dn) = match self.config.init {
                    LeafInit::Mobility => (1, 1),
                    init => (
                        goal_distance_with(p, self.prover, init),
                        goal_distance_with(p, self.prover.other(), init),
                    ),
                };
                // The restricted search's geese try at most their width.
                let moves = self
                    .narrowed_width()
                    .map_or(moves, |width| moves.min(width as u64));
                let summed = |h: u64| match self.config.sum {
                    ProofSum::Standard => moves * h,
                    ProofSum::Weak => h + moves - 1,
                };
                if p.side() == self.prover {
                    (h_pn, summed(h_dn), INDEPENDENT, true)
                } else {
                    (summed(h_pn), h_dn, INDEPENDENT, true)
                }
            }
        }
    }

    /// The node's numbers from its children, and the dependency of a disproof.
    fn combine_children(children: &[Child], or: bool, sum: ProofSum) -> (u64, u64, u32) {
        if or {
            let pn = children.iter().map(|c| c.pn).min().unwrap_or(INF);
            let dn = summed(children.iter().map(|c| c.dn), sum);
            let dep = children.iter().map(|c| c.dep).min().unwrap_or(INDEPENDENT);
            (pn, dn, dep)
        } else {
            let pn = summed(children.iter().map(|c| c.pn), sum);
            let dn = children.iter().map(|c| c.dn).min().unwrap_or(INF);
            let dep = children
                .iter()
                .filter(|c| c.dn == 0)
                .map(|c| c.dep)
                .max()
                .unwrap_or(INDEPENDENT);
            (pn, dn, dep)
        }
    }

    /// Multiple iterative deepening at the current (unsolved, non-terminal)
    /// position until its numbers reach the thresholds or the budget ends.
    fn mid(&mut self, th_pn: u64, th_dn: u64) -> (u64, u64, u32, Vec<Child>) {
        self.nodes += 1;
        let nodes_before = self.nodes;
        let depth = self.game.positions().len() - 1;
        let or = self.game.position().side() == self.prover;
        let (moves, narrowed) = self.searched_moves();
        let mut children = Vec::with_capacity(moves.len());
        for &mv in moves.iter() {
            let before = self.play(mv);
            let (pn, dn, dep, fresh) = self.leaf_fresh();
            self.take_back(before);
            children.push(Child {
                mv,
                pn,
                dn,
                dep,
                fresh,
            });
        }
        self.shape_fresh_children(&moves, narrowed, &mut children, or);
        let eps = self.config.epsilon_percent;
        let sum = self.config.sum;
        let (mut pn, mut dn, mut dep);
        loop {
            (pn, dn, dep) = Self::combine_children(&children, or, sum);
            if pn >= th_pn || dn >= th_dn || pn == 0 || dn == 0 || self.out_of_budget() {
                break;
            }
            // Best child (least pn at OR, least dn at AND) and the runner-up value.
            let key = |c: &Child| if or { c.pn } else { c.dn };
            let mut best = 0;
            let mut second = INF;
            for (i, c) in children.iter().enumerate().skip(1) {
                if key(c) < key(&children[best]) {
                    second = key(&children[best]);
                    best = i;
                } else if key(c) < second {
                    second = key(c);
                }
            }
            let c = children[best];
            let bound = if second >= INF {
                INF
            } else {
                (second + 1).max(second + second * eps / 100)
            };
            // The summed number's threshold for the child: what it may grow
            // to before the node's own summed number reaches the node's
            // threshold. The sum grows with the child one for one; the weak
            // number only once the child passes the largest child.
            let summed_share = |own: fn(&Child) -> u64| match sum {
                ProofSum::Standard => own(&c),
                ProofSum::Weak => children.iter().map(own).max().unwrap_or(0),
            };
            let (c_th_pn, c_th_dn) = if or {
                let th_dn_c = if th_dn >= INF {
                    INF
                } else {
                    th_dn - dn + summed_share(|c| c.dn)
                };
                (th_pn.min(bound), th_dn_c)
            } else {
                let th_pn_c = if th_pn >= INF {
                    INF
                } else {
                    th_pn - pn + summed_share(|c| c.pn)
                };
                (th_pn_c, th_dn.min(bound))
            };
            let before = self.play(c.mv);
            let (cpn, cdn, cdep, _) = self.mid(c_th_pn, c_th_dn);
            self.take_back(before);
            children[best] = Child {
                mv: c.mv,
                pn: cpn,
                dn: cdn,
                dep: cdep,
                fresh: false,
            };
        }
        let work = self.nodes - nodes_before + 1;
        let position = *self.game.position();
        if pn == 0 {
            self.table.store_proof(&position, self.prover, work);
            dep = INDEPENDENT;
            if self.plan_acts(or) {
                if self.plan.len() >= ORDER_CACHE_ENTRIES {
                    self.plan.clear();
                }
                if let Some(won) = children.iter().find(|c| c.pn == 0) {
                    self.plan.insert(position.geese().0, won.mv);
                }
            }
        } else if dn == 0 {
            if dep as usize >= depth {
                dep = INDEPENDENT;
                self.table.store_disproof(&position, self.searcher(), work);
            }
        } else {
            self.table
                .store_numbers(&position, self.searcher(), pn, dn, work);
        }
        (pn, dn, dep, children)
    }
}

/// Whether no draw can happen from `position`: classic Fox and Geese
/// without sideways steps, where every goose move is forward. Then no
/// placement can repeat (each goose move raises the geese's summed rows,
/// each capture lowers their count) and the counter never passes the
/// root's plus one, so the fifty-move rule cannot apply below a root
/// counter of 98; "the mover does not win" then means "the other side
/// wins", and one boolean search decides.
fn cannot_draw(position: &Position) -> bool {
    position.variant().no_position_recurs() && position.quiet() < 98
}

/// Stack of the search threads: a frame per ply, and paths can be long.
const STACK_BYTES: usize = 512 << 20;

/// The value from the side to move's search and the other side's.
fn combine(
    mover_search: SearchOutcome,
    other_search: SearchOutcome,
    mover_best: Option<Move>,
    other_best: Option<Move>,
    mover: Side,
) -> (Option<Value>, Option<Move>) {
    match (mover_search, other_search) {
        (SearchOutcome::Proven, _) => (Some(Value::Win(mover)), mover_best),
        // Every move loses; the other search has no refuting move to give.
        (_, SearchOutcome::Proven) => (Some(Value::Win(mover.other())), None),
        // Neither wins: the move that refuted the other side holds the draw.
        (SearchOutcome::Disproven, SearchOutcome::Disproven) => (Some(Value::Draw), other_best),
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_rules::Variant;

    #[test]
    fn leaf_starts_and_sums_parse_by_name_and_list_the_names_when_unknown() {
        assert_eq!("distance".parse(), Ok(LeafInit::Distance));
        assert_eq!("weak".parse(), Ok(ProofSum::Weak));
        assert_eq!(
            "x".parse::<LeafInit>(),
            Err(
                "unknown leaf initialisation `x`: expected `mobility` or `distance` or `region`"
                    .into()
            )
        );
        assert_eq!(
            "heavy".parse::<ProofSum>(),
            Err("unknown proof-number sum `heavy`: expected `standard` or `weak`".into())
        );
    }

    #[test]
    fn weak_numbers_count_the_largest_child_and_one_per_other_unsolved_child() {
        let weak = |v: &[u64]| summed(v.iter().copied(), ProofSum::Weak);
        let standard = |v: &[u64]| summed(v.iter().copied(), ProofSum::Standard);
        assert_eq!(weak(&[3, 5, 2]), 7);
        assert_eq!(standard(&[3, 5, 2]), 10);
        // Solved children (0) do not count; all solved is solved.
        assert_eq!(weak(&[0, 4, 0]), 4);
        assert_eq!(weak(&[0, 0]), 0);
        assert_eq!(standard(&[0, 0]), 0);
        // One child that cannot be solved makes the node so.
        assert_eq!(weak(&[2, INF]), INF);
        assert_eq!(standard(&[2, INF]), INF);
        // With one child per move at 1, both agree (mobility).
        assert_eq!(weak(&[1; 6]), standard(&[1; 6]));
    }

    #[test]
    fn goal_distances_count_geese_to_take_and_pen_points_to_fill() {
        let start = Position::start(Variant::two_foxes());
        // Twenty geese, nine must go: twelve to take, capped at 8. For the
        // geese, an empty pen is farther than the foxes' six steps (three).
        assert_eq!(goal_distance(&start, Side::Foxes), 8);
        assert_eq!(goal_distance(&start, Side::Geese), 3);
        let two_foxes = Variant::two_foxes();
        // Ten geese (two to take), seven of them in the pen (two points to fill).
        let p =
            Position::from_fen("GGG/GF./..GGG../..F..../G....../G../G.. f 0", two_foxes).unwrap();
        assert_eq!(p.geese().count(), 10);
        assert_eq!(goal_distance(&p, Side::Foxes), 2);
        assert_eq!(goal_distance(&p, Side::Geese), 2);
        // One fox with one step left, the other with none: one goose move
        // from being shut in, though three pen points are still open.
        let shut =
            Position::from_fen("F../GGG/..GGG../.GGGGG./..GGG../GFG/GGG g 0", two_foxes).unwrap();
        assert_eq!(goal_distance(&shut, Side::Geese), 1);
        let classic: Variant = "classic geese=13".parse().unwrap();
        let c = Position::start(classic);
        assert_eq!(goal_distance(&c, Side::Foxes), 8);
        // The classic fox at the start is free: several goose moves to shut it in.
        assert!(goal_distance(&c, Side::Geese) >= 2);
        let few =
            Position::from_fen(".../.../..FG.../....G../......./G../..G f 0", classic).unwrap();
        assert_eq!(goal_distance(&few, Side::Foxes), 1);
    }

    #[test]
    fn the_region_start_counts_the_points_a_fox_could_reach_and_a_fox_on_the_pen() {
        let two_foxes = Variant::two_foxes();
        let at = |fen: &str| Position::from_fen(fen, two_foxes).unwrap();
        let region = |p: &Position| goal_distance_with(p, Side::Geese, LeafInit::Region);
        // A real game's pocket (the shipped network's foxes against
        // alpha-beta's geese, 10 plies before they were shut in): the fox
        // on d7 cannot move, the one on b3 can reach a3 and a4 and no jump.
        // The geese's pen lacks one point, d7, which the fox holds: the
        // distance start calls the geese one move from winning here and
        // after every goose move; the region start leaves the pen out and
        // says two.
        let pocket = at("GFG/GGG/GGGGGGG/.GGG.G./.FGG.../.G./... f 22");
        assert_eq!(fox_region(&pocket), 2);
        assert_eq!(goal_distance(&pocket, Side::Geese), 1);
        assert_eq!(region(&pocket), 2);
        // With a goose on a4 the pocket is one point, a3.
        let closed = at("GFG/GGG/GGGGGGG/GGGG.G./.FGG.../.G./... f 22");
        assert_eq!(fox_region(&closed), 1);
        assert_eq!(region(&closed), 1);
        // The goose on d3 steps sideways to e3: the fox on b3 can jump c3
        // to d3, and from there the board is open: the region passes the
        // cap.
        let opened = at("GFG/GGG/GGGGGGG/.GGG.G./.FG.G../.G./... f 22");
        assert!(fox_region(&opened) > 8);
        assert_eq!(region(&opened), 8);
        // Shut in: the fox on a4 has no step and no jump (b3-c2 is not a
        // line: b2 is not a point).
        let shut = at("GFG/GGG/GGGGGGG/FGGG.G./GG.G.../.../... f 0");
        assert_eq!(fox_region(&shut), 0);
        // The start: the foxes roam, the pen is empty; both estimates cap.
        let start = Position::start(two_foxes);
        assert!(fox_region(&start) > 8);
        assert_eq!(region(&start), 8);
        assert_eq!(goal_distance_with(&start, Side::Foxes, LeafInit::Region), 8);
    }
}
