//! The `halatafl` command's library part: the checks of a command's output
//! files, and (re-exported from `halatafl-program`, where they live so the
//! Python package can use them without this crate) building agents from
//! specs, drawing boards and the engine protocol.

pub use halatafl_program::{agents, board_text, protocol};
pub mod move_order;
pub mod outputs;
