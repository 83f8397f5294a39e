//! The layer between the engines and the programs (KataGo's `program/`):
//! what the `halatafl` command and the Python package share, so the
//! package builds without the command's tree (training, solver, reports).
//!
//! - [`agents`]: building any agent from its spec string, the one place
//!   that knows every kind;
//! - [`protocol`]: the line-based engine protocol (UCI/GTP-like) over any
//!   reader and writer;
//! - [`board_text`]: the board drawn as text (a cross with coordinates).

#![warn(missing_docs)]

pub mod agents;
pub mod board_text;
pub mod protocol;

/// The bounds of a search budget, as agent specs and the engine's `go`
/// accept them, for other front ends (the Python package) to apply the
/// same ones: plies of alpha-beta, simulations of MCTS, milliseconds per move.
pub mod limits {
    pub use halatafl_agent::MAX_MOVETIME_MS;
    pub use halatafl_alphabeta::MAX_DEPTH;
    pub use halatafl_mcts::MAX_SIMS;
}
