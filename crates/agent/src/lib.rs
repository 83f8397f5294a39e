//! The `Agent` interface: what the arena, the CLI and the engine protocol see of
//! any player (random, alpha-beta, MCTS, network), and the spec strings agents
//! are built from (`alphabeta:depth=6`, `mcts:sims=800,cpuct=1.5`).
//!
//! Specs are parsed here; building an agent from a spec is the job of whoever
//! knows every kind of agent (the `halatafl` binary), so this crate stays small
//! and every agent crate depends on it, never the other way.

mod random;
mod spec;

pub use random::RandomAgent;
pub use spec::{AgentSpec, SpecError};

use halatafl_rules::{Game, Move};
use std::time::Duration;

/// Limits for one move. Every field is optional; an agent uses those it
/// understands and its own defaults for the rest. When several are given the
/// agent stops at the first one reached.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    /// Search depth in plies (alpha-beta).
    pub depth: Option<u32>,
    /// Simulations / playouts (MCTS).
    pub sims: Option<u32>,
    /// Wall-clock time for this move.
    pub movetime: Option<Duration>,
}

/// An agent's answer: the move and what it thinks of the position.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub mv: Move,
    /// Expected result for the side to move, in [-1, 1], when the agent has one.
    pub value: Option<f32>,
    /// Search statistics for `info` lines and logs.
    pub info: SearchInfo,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchInfo {
    /// Completed depth (alpha-beta) or 0.
    pub depth: u32,
    /// Nodes (alpha-beta) or simulations (MCTS) spent on this move.
    pub nodes: u64,
    /// Principal variation, first move first, when known.
    pub pv: Vec<Move>,
    /// Anything else worth showing, as `key value` words.
    pub extra: String,
}

impl Decision {
    pub fn just(mv: Move) -> Decision {
        Decision {
            mv,
            value: None,
            info: SearchInfo::default(),
        }
    }
}

/// A player. `choose` is called only for games that are not over; it must
/// return a legal move of the current position.
pub trait Agent: Send {
    /// The spec this agent was built from, as it appears in CSV files.
    fn spec(&self) -> String;

    /// Picks a move for the side to move in `game` within `budget` (the agent's
    /// own spec decides for fields the budget leaves out).
    fn choose(&mut self, game: &Game, budget: &Budget) -> Decision;

    /// A new game starts (forget trees, keep learned weights and tables you
    /// want to keep). `seed` varies tie-breaks and noise between games.
    fn new_game(&mut self, seed: u64);
}
