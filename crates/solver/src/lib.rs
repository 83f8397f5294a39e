//! Exact game-theoretic values of Two Foxes and Fox and Geese positions.
//!
//! # Algorithm
//!
//! Depth-first proof-number search, df-pn (Nagai 2002, "Df-pn algorithm
//! for searching AND/OR trees and its applications", PhD thesis, Univ. of
//! Tokyo), with a transposition table ([`tt`]), the 1+ε trick (Pawlewicz &
//! Lew 2007, "Improving depth-first PN-search: 1+ε trick") and mobility
//! initialisation of new leaves (as in df-pn+, Nagai & Imai).
//!
//! A value has three outcomes, so it is found by two boolean searches, each
//! asking "does side P (the prover) win?": if the side to move wins, one
//! search decides; otherwise the second asks whether the other side wins,
//! and if neither does the position is a draw. In a boolean search a node
//! where P moves is an OR node, one where the other side moves an AND node:
//!
//! - OR node:  `pn = min_c pn(c)`, `dn = Σ_c dn(c)`
//! - AND node: `pn = Σ_c pn(c)`,  `dn = min_c dn(c)`
//! - P wins at a leaf: `(pn, dn) = (0, ∞)`; P does not win: `(∞, 0)`; a new
//!   leaf with `k` legal moves: `(1, k)` where P moves, `(k, 1)` otherwise.
//! - With weak proof numbers ([`ProofSum::Weak`]; Ueda, Hashimoto,
//!   Hashimoto & Iida 2008) each sum `Σ_c x(c)` becomes
//!   `max_c x(c) + |{c : x(c) > 0}| − 1` (0 when no child is unsolved),
//!   and the child's threshold on it `T − x(n) + max_c x(c)`.
//!
//! `mid(n, T_pn, T_dn)` expands `n` and works below it until `pn(n) ≥ T_pn`
//! or `dn(n) ≥ T_dn`, always in the child `c1` of least `pn` (OR) or least
//! `dn` (AND), with the second-best `c2`:
//! - OR:  `T_pn(c1) = min(T_pn, max(pn(c2) + 1, ⌈pn(c2)·(1+ε)⌉))`,
//!   `T_dn(c1) = T_dn − dn(n) + dn(c1)`;
//! - AND: the same with pn and dn swapped.
//!
//! The root gets `T = (∞, ∞)`. Each call keeps its children's numbers in a
//! local array (read from the table on entry, then updated from each child's
//! return), so a result that may not go to the table (below) still steers
//! the parent, and the search cannot loop on stale table entries.
//!
//! # The draw rules: why every answer is exact
//!
//! Threefold repetition and the fifty-move rule (docs/rules.md rules 4 and 5)
//! make a position's value depend on how it was reached: the
//! graph-history interaction (GHI) problem (Kishimoto & Müller 2004, "A
//! general solution to the graph history interaction problem"). This crate
//! avoids wrong answers by three facts.
//!
//! **The state graph is acyclic in (placement, quiet counter).** A capture
//! lowers the goose count for good and a forward goose step raises the
//! geese's summed rows until a capture, so no placement comes back after
//! either; every other move adds one to the quiet counter. A placement that
//! repeats therefore repeats with a higher counter, and the counter stops at
//! 100 (a draw). The game without rule 4 (call it G″: rules 1-3 and 5) is a
//! finite game on a finite DAG, where a value depends on the state alone.
//!
//! **Lemma: from a position without history, P wins the real game G ⇔ P
//! wins G″ ⇔ P wins G\*,** where G\* is G″ in which any repeated placement
//! (the second occurrence on the path, same side to move) ends the game as a
//! non-win for P. (G ⇒ G″: a winning tree of G meets no threefold, so it wins
//! G″. G″ ⇒ G\*: take a finite winning tree of G″; while a path holds a
//! placement at depths i < j, put the subtree at j in place of the one at i.
//! It still wins: the counter at i is lower, and a lower counter only delays
//! rule 5, which the tree never reached; nothing else depends on the
//! counter. The tree shrinks each time, so this ends with a tree free of
//! repetitions: a G\* win. G\* ⇒ G: a G\* win never repeats a placement, so
//! rule 4 never applies.) The same argument gives **monotonicity**: a G″ win
//! at counter q is a win at every counter ≤ q, a G″ non-win at q is a
//! non-win at every counter ≥ q.
//!
//! **What the search computes, and what it stores.** The search plays G\*:
//! a child whose placement already stands on the current path is a non-win
//! for P, tagged with the path index `j` of its earlier occurrence.
//! - A *proof* never rests on a repetition leaf (those are non-wins), so
//!   every proof is a G″ winning tree for its state, valid on any path, and
//!   the table keeps it for the state's counter and every lower one.
//! - A *disproof* carries the least index `j` of the repetitions it rests on
//!   (OR node: the least over all children; AND node: the
//!   largest over the disproven children, so an independent one wins). At node `n` at path
//!   index `d`, a disproof with `j ≥ d` rests only on repetitions inside
//!   `n`'s own subtree: it is a G\* non-win from `n` with no history, hence
//!   (lemma) a G″ non-win, valid on any path; the table keeps it for `n`'s
//!   counter and every higher one. A disproof with `j < d` depends on the
//!   path above `n`: it is passed up to the parent's local array (where the
//!   path is the same) and never stored.
//! - The root has no history, so its G\* value, which is what the search
//!   computes there, is its value in G (lemma).
//!
//! So no stored result is path-dependent, every table hit is a result valid
//! on every path, and there are no false proofs or disproofs. The entries
//! also keep whole placements, not hashes ([`tt`]). Tests check the values
//! against plain minimax over the real rules with full history, and replay
//! proofs over the real rules ([`verify_win`]).
//!
//! # The geese's restricted search
//!
//! Where the geese may step sideways, their boolean search first plays a
//! restricted game R ([`SolverConfig::forward_share_percent`]): G\* in
//! which the geese step forward, and sideways only while a count of
//! sideways steps left, part of R's state, lasts; where they have no
//! allowed move they do not win. The foxes keep every move.
//! - **An R win is a G\* win.** The geese's winning tree in R uses legal
//!   moves only, answers every fox move, and its leaves are geese wins by
//!   the same rules 1-3 (a leaf where the restricted geese cannot move is
//!   a non-win and so in no winning tree). So R's proofs are stored as the
//!   geese's own, for G\* at their counter and below, and R reads the
//!   geese's stored proofs and disproofs as its own results (a real win
//!   reached by restricted moves is still a real win; a real non-win is a
//!   non-win with fewer moves).
//! - **R's disproofs stay in R.** That the restricted geese do not win says
//!   nothing of the real geese, so R stores its disproofs, and its numbers,
//!   under a key of its own that holds the count of sideways steps left
//!   ([`tt::Searcher::RestrictedGeese`]); no other search reads them. Within
//!   R the argument above holds as for G\* (R is such a game with fewer
//!   moves for one side), with the dependency tags unchanged.
//! - **Why it is cheaper.** With no sideways step left every goose move
//!   raises the geese's summed rows (or a capture lowers their count) and
//!   resets the quiet counter, so no placement can repeat below a node
//!   where the count is 0: no disproof there rests on a repetition, and all
//!   of them are stored, where G\*'s searches find the same disproofs
//!   again on each path. If R proves nothing within its share of the
//!   budget, the G\* search runs with the rest.
//!
//! The value of a position string is the value with no history (docs/rules.md:
//! a position string carries none); the counter in the string counts.
//!
//! # The geese's march
//!
//! Where the geese prove a win in Two Foxes and
//! [`SolverConfig::march_budget`] is not 0, a new leaf where the foxes
//! move is first put to [`march`]: a search over the geese's placements
//! alone, the foxes reduced to the points each may stand on, that proves
//! the geese win by steps behind a wall no fox can jump, whatever the
//! foxes do. A march never repeats a placement and resets the fifty-move
//! counter at each forward step, so it is a G″ win from any history (the
//! lemma above): a proof may rest on it, as on an end of the game, and
//! [`verify_win`] accepts it as a leaf after asking it again itself.
//!
//! # Classic Fox and Geese without sideways steps: the [`dag`] method
//!
//! There every goose move is a forward step, so no placement repeats, the
//! quiet counter never climbs and no draw is possible: the states form a
//! finite acyclic graph whose values depend on the state alone. [`dag`]
//! solves such positions by a memoised win/loss search over that graph, a
//! far cheaper question than the df-pn searches above ask (its module docs
//! give the argument and the method).
//!
//! The df-pn search uses one fact from there in the same game: a leaf
//! where the fox is *free* (it stands on, or next to, a point no goose can
//! ever reach that has a neighbour no goose can reach either) is a fox win,
//! proven without search. It holds only where no draw can happen (forward
//! steps only, the quiet counter below the fifty-move rule's reach), so it
//! is a real win with no history: a proof may rest on it, and so may a
//! disproof of the geese, on any path.
//!
//! # Whole classic games: retrograde analysis
//!
//! [`retro::plain`] solves the classic game without sideways steps whole:
//! the fox-to-move value of every placement of 4 up to 17 geese, fewest
//! geese first. [`retro::sideways`] does the same with sideways steps by the lemma
//! above: it computes G″ level by level (placements of as many geese with
//! the same summed rows, which only sideways and fox steps connect), with
//! the counter handled exactly by counting plies to a forced win, and keeps
//! the values at counter 0, which are the real game's from a position
//! without history; neither side winning G″ is a draw.

#![warn(missing_docs)]

pub mod accuracy;
pub mod dag;
pub mod march;
pub mod order;
pub mod proving;
pub mod replay;
pub mod retro;
mod search;
pub mod suite;
pub mod tt;
mod value;
mod verify;

pub use dag::{DagConfig, DagError, DagSolution, DagSolver};
pub use march::{March, MAX_MARCH_SIDEWAYS};
pub use order::MoveOrder;
pub use proving::ProvingAgent;
pub use retro::sideways::{SidewaysCheck, SidewaysTables, SidewaysValue};
pub use retro::{RetroConfig, RetroError, RetroTables, RetroValue};
pub use search::{
    goal_distance, LeafInit, ProofSum, SearchOutcome, Solution, Solver, SolverConfig, MAX_SIDEWAYS,
};
pub use tt::TableStats;
pub use value::Value;
pub use verify::{verify_win, VerifyError};

use thiserror::Error;

/// What can go wrong when solving.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SolveError {
    /// A thread count other than 1 or 2: there are only two boolean
    /// searches to run at once.
    #[error("--threads {0}: the solver runs its two boolean searches (foxes win? geese win?) on 1 or 2 threads")]
    Threads(usize),
    /// A table size outside 1 to 65536 MiB.
    #[error("--tt-mb {0}: the table size must be 1 to 65536 MiB")]
    TableSize(usize),
    /// A node budget of 0, which could prove nothing.
    #[error("--budget-nodes 0: the node budget must be at least 1")]
    Budget,
    /// An order base outside 1 to 64.
    #[error("--order-base {0}: must be 1 to 64 (1 ignores the order; 2, the default, doubles a new leaf's number per rank)")]
    OrderBase(u64),
    /// A forward-first share above 100 percent.
    #[error("--forward-share {0}: must be 0 to 100 (percent of the budget for the geese's forward-only search; 0 turns it off)")]
    ForwardShare(u64),
    /// More sideways steps for the restricted search than its key holds.
    #[error("--forward-sideways {0}: must be 0 to {max}", max = search::MAX_SIDEWAYS)]
    ForwardSideways(u8),
    /// More sideways steps for a march than it allows.
    #[error("--march-sideways {0}: must be 0 to {max}", max = march::MAX_MARCH_SIDEWAYS)]
    MarchSideways(u8),
    /// A table larger than the memory available now: refused with a
    /// message rather than aborting on allocation.
    #[error("--tt-mb {asked}: more than the {available} MiB of memory this machine has available; give at most that")]
    Memory {
        /// The size asked for, in MiB.
        asked: usize,
        /// What the system reports available, in MiB.
        available: u64,
    },
}

/// The memory the system reports available (`MemAvailable` of
/// `/proc/meminfo`), in MiB; `None` where it reports nothing. Every table
/// is checked against it before it is allocated: a table larger than the
/// machine can give aborts the process on allocation instead of failing
/// with a message.
pub fn available_mib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib >> 10)
}

/// Refuses a table of `mib` MiB that the machine cannot give now.
pub(crate) fn check_table_memory(mib: usize) -> Result<(), (usize, u64)> {
    match available_mib() {
        Some(available) if mib as u64 > available => Err((mib, available)),
        _ => Ok(()),
    }
}
