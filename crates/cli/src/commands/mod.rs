//! One file per subcommand.
pub mod moves;
pub mod perft;
pub mod replay;
