//! One file per subcommand.
pub mod accuracy;
pub mod average;
pub mod bench_net;
pub mod engine;
pub mod ladder;
pub mod match_cmd;
pub mod moves;
pub mod perft;
pub mod play;
pub mod replay;
pub mod report;
pub mod serve;
pub mod solve;
pub mod stage;
pub mod summary;
pub mod tournament;
pub mod train;
