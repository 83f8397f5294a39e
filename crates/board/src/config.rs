//! The server's settings. Every default is in the one `Default` impl; the
//! bounds keep one page (or one careless script) from taking the machine.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

/// What `halatafl serve` serves and within which bounds.
#[derive(Clone, Debug)]
pub struct BoardConfig {
    /// The address to listen on: loopback unless told otherwise, so the
    /// board is not reachable from other machines by accident.
    pub bind: IpAddr,
    /// The port (0: any free port, printed at start).
    pub port: u16,
    /// Game CSVs to list.
    pub games: Vec<PathBuf>,
    /// Run directories to list (their games, checkpoints and report).
    pub runs: Vec<PathBuf>,
    /// Agent specs offered on the page; `net:ckpt=` specs named here (and
    /// the checkpoints of the runs) are the only checkpoints it loads.
    pub agents: Vec<String>,
    /// Longest thinking time of one search (analysis or an agent's move):
    /// longer asks are refused, and every search is stopped at it.
    pub max_movetime: Duration,
    /// Most MCTS simulations of one search.
    pub max_sims: u32,
    /// Deepest alpha-beta search, in plies.
    pub max_depth: u32,
    /// Most nodes of one solver run.
    pub max_solver_nodes: u64,
    /// Searches that may run at once; more wait (at most `queue_wait`).
    pub max_searches: usize,
    /// How long a search waits for its turn before it is refused.
    pub queue_wait: Duration,
    /// Largest request body, in bytes (a line of 20,000 moves fits).
    pub max_body_bytes: usize,
    /// Build the retrograde tables of classic Fox and Geese when a classic
    /// position is analysed (minutes and GiB: see `tables`).
    pub tables: bool,
    /// Most memory the tables may take, in MiB (`None`: what is available).
    pub tables_mib: Option<u64>,
    /// Seed of the agents' and searches' randomness.
    pub seed: u64,
}

impl Default for BoardConfig {
    fn default() -> BoardConfig {
        BoardConfig {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8737,
            games: Vec::new(),
            runs: Vec::new(),
            agents: Vec::new(),
            max_movetime: Duration::from_secs(30),
            max_sims: 100_000,
            max_depth: 12,
            max_solver_nodes: 20_000_000,
            max_searches: 2,
            queue_wait: Duration::from_secs(60),
            max_body_bytes: 1 << 20,
            tables: false,
            tables_mib: None,
            seed: 1,
        }
    }
}
