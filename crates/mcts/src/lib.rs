//! Monte Carlo tree search for Two Foxes, generic over the game and over leaf
//! evaluation, built for batched evaluation.
//!
//! - [`SearchGame`]: the game as the search sees it (implemented for
//!   halatafl's `Game`; tests use tic-tac-toe).
//! - [`Evaluator`]: batch of leaves in, priors (in legal-move order) and
//!   win/draw/loss values (for the side to move) out. `Send + Sync`, `&self`:
//!   see [`evaluator`] for the full contract. [`UniformEvaluator`] and
//!   [`RolloutEvaluator`] need no network.
//! - [`Search`]: one tree: AlphaZero PUCT with Dirichlet root noise, FPU
//!   reduction, virtual-loss batches, MCTS-solver, WDL values, tree reuse,
//!   temperature move choice; or Gumbel root search ([`RootMode::Gumbel`]).
//!   The formulas and papers are in [`search`] and [`gumbel`].
//! - [`Lockstep`]: many searches (games) stepped together, one evaluator call
//!   per round: the self-play case.
//! - [`MctsConfig`]: every setting and default in one place.
//! - [`MctsAgent`] and [`from_spec`]: the arena player, `mcts:sims=N,...`.

#![warn(missing_docs)]

mod agent;
mod config;
pub mod evaluator;
mod game;
pub mod gumbel;
mod lockstep;
mod rng;
pub mod search;
mod spec;
mod tree;

pub use agent::MctsAgent;
pub use config::{MctsConfig, RootMode, MAX_CAPTURE_PLIES, MAX_ROOM_WEIGHT};
pub use evaluator::{Evaluations, Evaluator, LeafBatch, RolloutEvaluator, UniformEvaluator, Wdl};
pub use game::{SearchGame, Terminal, TwoFoxesLeaf};
pub use lockstep::Lockstep;
pub use search::{Search, SearchResult};
pub use spec::{from_spec, spec_forms, spec_options, LeafEval, MctsSpec, MAX_SIMS, MCTS_OPTIONS};

/// Bytes per tree node for a game whose moves are `M` (the move is stored in
/// the node).
pub fn node_bytes<M: Copy>() -> usize {
    std::mem::size_of::<tree::Node<M>>()
}
