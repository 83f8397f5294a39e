//! The `Agent` interface: what the arena, the CLI and the engine protocol see of
//! any player (random, alpha-beta, MCTS, network), and the spec strings agents
//! are built from (`alphabeta:depth=6`, `mcts:sims=800,cpuct=1.5`).
//!
//! Specs are parsed here; building an agent from a spec is the job of whoever
//! knows every kind of agent (the `halatafl` binary), so this crate stays small
//! and every agent crate depends on it, never the other way.

#![warn(missing_docs)]

mod random;
mod spec;

pub use random::RandomAgent;
pub use spec::{AgentSpec, SpecError};

use halatafl_rules::{Game, Move};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest thinking time per move any agent spec or engine `go` accepts:
/// one day, in milliseconds. Longer is surely a typo, and a bound keeps the
/// deadline arithmetic far from overflow.
pub const MAX_MOVETIME_MS: u64 = 24 * 60 * 60 * 1000;

/// Limits for one move. Every field is optional; an agent uses those it
/// understands and its own defaults for the rest. When several are given the
/// agent stops at the first one reached.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budget {
    /// Search depth in plies (alpha-beta).
    pub depth: Option<u32>,
    /// Simulations / playouts (MCTS).
    pub sims: Option<u32>,
    /// Wall-clock time for this move.
    pub movetime: Option<Duration>,
    /// Raised by another thread to end the search now (the engine's `stop`):
    /// searching agents answer with the best move found so far.
    pub stop: Option<StopSignal>,
}

impl Budget {
    /// Whether the budget's stop signal has been raised.
    pub fn is_stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(StopSignal::is_stopped)
    }
}

/// A flag shared between a search and whoever may end it early. Clones share
/// the flag. Searches read it where they already check their deadline, so a
/// check costs one relaxed atomic load; nothing else is ordered by it.
#[derive(Clone, Debug, Default)]
pub struct StopSignal(Arc<AtomicBool>);

impl StopSignal {
    /// A signal not yet raised.
    pub fn new() -> StopSignal {
        StopSignal::default()
    }

    /// Asks every search holding this signal (or a clone) to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`StopSignal::stop`] has been called on this signal or a
    /// clone. Relaxed: a search may see it one check late, never not at all.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Two signals are equal when they are the same flag (clones of one signal),
/// so budgets compare equal only when they would be stopped together.
impl PartialEq for StopSignal {
    fn eq(&self, other: &StopSignal) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A position an agent was asked to move in although its game is over.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the game is over ({result}, {reason}) at {fen}: there is no move to choose")]
pub struct GameOver {
    /// `foxes`, `geese` or `draw`.
    pub result: &'static str,
    /// The end rule, as `EndReason`'s name.
    pub reason: &'static str,
    /// The position, for the message.
    pub fen: String,
}

/// An agent's answer: the move and what it thinks of the position.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The move to play: legal in the position the agent was given.
    pub mv: Move,
    /// Expected result for the side to move, in [-1, 1], when the agent has one.
    pub value: Option<f32>,
    /// Search statistics for `info` lines and logs.
    pub info: SearchInfo,
}

/// What a search reports about its work on one move, shown in the engine's
/// `info` lines and in logs; agents without a search leave it empty.
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
    /// A bare move with no value and empty search statistics, for agents
    /// that do not search (random) or fall back to a fixed move.
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
    /// own spec decides for fields the budget leaves out). The game must not
    /// be over: see [`Agent::try_choose`] for games that may be.
    fn choose(&mut self, game: &Game, budget: &Budget) -> Decision;

    /// [`Agent::choose`] for a game that may be over: a finished game (by
    /// any of the five end rules, history included) is an error naming how
    /// it ended, never a panic inside a search that has no move to find.
    /// Every entry point that hands an agent a position from outside (the
    /// Python package, the engine protocol, suites) goes through it.
    fn try_choose(&mut self, game: &Game, budget: &Budget) -> Result<Decision, GameOver> {
        match game.outcome() {
            Some(outcome) => Err(GameOver {
                result: outcome.result_word(),
                reason: outcome.reason.name(),
                fen: game.position().fen(),
            }),
            None => Ok(self.choose(game, budget)),
        }
    }

    /// A new game starts (forget trees, keep learned weights and tables you
    /// want to keep). `seed` varies tie-breaks and noise between games.
    fn new_game(&mut self, seed: u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_signals_are_shared_by_clones() {
        let signal = StopSignal::new();
        let budget = Budget {
            stop: Some(signal.clone()),
            ..Budget::default()
        };
        assert!(!budget.is_stopped());
        assert!(!Budget::default().is_stopped());
        signal.stop();
        assert!(budget.is_stopped());
        assert_eq!(budget.clone(), budget);
        // Another flag is another signal, raised or not.
        assert_ne!(
            budget,
            Budget {
                stop: Some(StopSignal::new()),
                ..Budget::default()
            }
        );
    }
}
