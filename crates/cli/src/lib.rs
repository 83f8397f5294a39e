//! The `halatafl` command's library part: what other programs (fuzz
//! targets, tests) use without running the binary: building agents from
//! specs, drawing boards, and the engine protocol.

pub mod agents;
pub mod board_text;
pub mod outputs;
pub mod protocol;
