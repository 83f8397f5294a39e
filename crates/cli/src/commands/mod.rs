//! One file per subcommand.
pub mod bench_net;
pub mod match_cmd;
pub mod moves;
pub mod perft;
pub mod replay;
pub mod tournament;
pub mod train;
