use anyhow::{anyhow, Result};
use clap::Args;
use halatafl_board::BoardConfig;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Start the analysis board: a local web page to browse games (of runs and
/// game CSVs), step through them, see what the network, a search,
/// alpha-beta, the solver and the classic tables say of a position, and
/// play any agent from any position. The page is built into the binary
/// (no network needed). See docs/board.md.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A run directory (`halatafl train`): its evaluation and self-play
    /// games, its checkpoints as networks, its report on a page. Repeatable.
    #[arg(long = "run", value_name = "DIR")]
    pub runs: Vec<PathBuf>,
    /// A game CSV (match, tournament, ladder, evaluation). Repeatable.
    #[arg(long = "games", value_name = "CSV")]
    pub games: Vec<PathBuf>,
    /// An agent spec to offer on the page (e.g. `net:ckpt=PATH,ms=200`);
    /// the only way, beside --run, to let the page load a checkpoint. Repeatable.
    #[arg(long = "agent", value_name = "SPEC")]
    pub agents: Vec<String>,
    /// The port; 0 picks a free one (printed).
    #[arg(long, default_value_t = BoardConfig::default().port)]
    pub port: u16,
    /// The address to listen on. The default, 127.0.0.1, serves this
    /// machine only; give 0.0.0.0 only on a network you trust.
    #[arg(long, default_value_t = BoardConfig::default().bind)]
    pub bind: IpAddr,
    /// Longest search of one request, in ms (analysis or an agent's move).
    #[arg(long, default_value_t = BoardConfig::default().max_movetime.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub max_ms: u64,
    /// Most MCTS simulations of one request.
    #[arg(long, default_value_t = BoardConfig::default().max_sims,
          value_parser = clap::value_parser!(u32).range(1..=halatafl_program::limits::MAX_SIMS as i64))]
    pub max_sims: u32,
    /// Deepest alpha-beta search of one request, in plies.
    #[arg(long, default_value_t = BoardConfig::default().max_depth,
          value_parser = clap::value_parser!(u32).range(1..=halatafl_program::limits::MAX_DEPTH as i64))]
    pub max_depth: u32,
    /// Most nodes of one solver request.
    #[arg(long, default_value_t = BoardConfig::default().max_solver_nodes,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub max_solver_nodes: u64,
    /// Searches that may run at once (more wait their turn).
    #[arg(long, default_value_t = BoardConfig::default().max_searches as u64,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub max_searches: u64,
    /// Build classic Fox and Geese's retrograde tables when a classic
    /// position is analysed, up to the geese on its board (seconds for an
    /// endgame; 13 geese: about 4 minutes and 3.6 GiB on 2 cores; with
    /// sideways steps about 30 minutes and 12 GiB).
    #[arg(long)]
    pub tables: bool,
    /// Most memory the tables may take, in MiB [default: what is available].
    #[arg(long, requires = "tables")]
    pub tables_mib: Option<u64>,
}

pub fn run(args: ServeArgs) -> Result<()> {
    for run in &args.runs {
        if !run.join("config.toml").is_file() {
            return Err(anyhow!(
                "--run {}: not a run directory (no config.toml; runs are made by `halatafl train`)",
                run.display()
            ));
        }
    }
    let config = BoardConfig {
        bind: args.bind,
        port: args.port,
        games: args.games,
        runs: args.runs,
        agents: args.agents,
        max_movetime: Duration::from_millis(args.max_ms),
        max_sims: args.max_sims,
        max_depth: args.max_depth,
        max_solver_nodes: args.max_solver_nodes,
        max_searches: args.max_searches as usize,
        tables: args.tables,
        tables_mib: args.tables_mib,
        ..BoardConfig::default()
    };
    // One intra-op thread per network call: the searches run side by side.
    halatafl_nn::set_threads(1);
    halatafl_board::run(config, |address, board| {
        let (games, files, problems) = board.counts();
        let url = match address.ip() {
            ip if ip.is_unspecified() => format!("http://127.0.0.1:{}/", address.port()),
            _ => format!("http://{address}/"),
        };
        println!("halatafl board: {url}  ({games} games from {files} files, {problems} lines not read; Ctrl-C stops)");
        if !address.ip().is_loopback() {
            println!("note: listening on {address}, reachable from other machines");
        }
    })
    .map_err(|e| anyhow!(e))
}
