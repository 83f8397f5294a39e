use crate::variant_args::PositionArgs;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use halatafl_arena::{read_game_rows, write_csv_atomic};
use halatafl_cli::move_order::OrderSpec;
use halatafl_nn::agent::NetRegistry;
use halatafl_rules::{Game, Position, Side, Variant};
use halatafl_solver::dag::check_position;
use halatafl_solver::retro::sideways::{self as retro_sideways, SidewaysTables};
use halatafl_solver::retro::{self, RetroConfig, RetroError, RetroTables};
use halatafl_solver::suite::{
    difficulty, exact_row, game_stage, keeping_moves, ExactRowError, SuiteRow,
};
use halatafl_solver::{
    DagConfig, DagSolution, DagSolver, SearchOutcome, Solution, Solver, SolverConfig, Value,
};
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

/// Prove the game-theoretic value of a position (foxes win, geese win or
/// draw) by depth-first proof-number search, exact under the repetition and
/// fifty-move rules (see the halatafl-solver crate docs); the position has
/// no history. Prints `unknown` and the root's proof and disproof numbers
/// when the node budget runs out. With --from-games, builds a test suite
/// instead: solves positions of recorded games and writes the solved ones.
/// With --method dag (classic Fox and Geese without sideways steps only):
/// a memoised win/loss search over the game's acyclic state graph, then a
/// check of the value by replayed games. With --method retro (the same
/// games): retrograde analysis of every placement of up to the position's
/// number of geese, in memory, then a check of the tables against the
/// rules engine along games.
#[derive(Args, Debug)]
pub struct SolveArgs {
    #[command(flatten)]
    pub position: PositionArgs,
    /// dfpn: proof-number search, any variant. dag: classic Fox and Geese
    /// without sideways steps, where no draw is possible (halatafl-solver's
    /// `dag` module): a plain memoised win/loss search, a second exact
    /// method there (faster per position; df-pn, best-first, mostly needs
    /// fewer positions).
    #[arg(long, value_enum, default_value = "dfpn")]
    pub method: Method,
    /// --method dag and retro: games replayed from the position after the
    /// solve, the proven winner playing the solver's moves and the loser
    /// random ones; each must end with the proven winner (retro also
    /// re-derives every position's value on the way from the rules
    /// engine's moves and its children's values).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(0..=MAX_REPLAY_LINES))]
    pub replay_lines: u64,
    /// --method retro: positions of the replayed games (drawn at random)
    /// solved again by the DAG search, whose answers must agree (those it
    /// cannot finish within --budget-nodes, default 2,000,000 here, are
    /// counted as unknown).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=MAX_COMPARE_DAG))]
    pub compare_dag: u64,
    /// --method retro with sideways steps: a directory where each layer's
    /// chain planes are saved as soon as it is built (2 bits per placement
    /// and empty point: 4.3 GiB at 15 geese, 4.6 at 16), and from which the
    /// build resumes, starting above the most geese saved there below the
    /// position's. Splits a build too long for one sitting (17 geese: about
    /// 3 hours on 2 cores) into several; one directory serves builds to any
    /// number of geese.
    #[arg(long)]
    pub layers_dir: Option<PathBuf>,
    /// Most positions to expand over both searches (with --from-games: per
    /// position, and per move when the moves that keep its value are
    /// solved) [default: 10000000].
    #[arg(long)]
    pub budget_nodes: Option<u64>,
    /// Transposition table size in MiB [default: 256]. --method retro: the
    /// most memory its tables may take [default: the memory available].
    #[arg(long)]
    pub tt_mb: Option<usize>,
    /// 1: the two boolean searches (does the side to move win? does the
    /// other side?) run one after the other on one table; 2: at once, each
    /// with half the table and half the budget. No other value is accepted,
    /// except with --method retro: its worker threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// df-pn: how new leaves' proof numbers start: `distance` (mobility
    /// times each side's distance to its goal: geese to take, pen points to
    /// fill; the default), `region` (the same, with the geese's shut-in
    /// estimate from the empty points the foxes could reach) or `mobility`
    /// (plain df-pn). docs/solver.md.
    #[arg(long, default_value = "distance")]
    pub init: halatafl_solver::LeafInit,
    /// df-pn: what ranks the mover's moves, so that a new leaf's own number
    /// starts at `--order-base`^rank times its estimate: `none`
    /// (the default), `eval` (alpha-beta's static evaluation of each
    /// move), `best` (the shipped network's policy) or
    /// `net:ckpt=PATH[,device=cpu|cuda][,precision=f32|bf16|auto]`. The
    /// answers stay exact whatever the order; a good one proves in fewer
    /// nodes. docs/solver.md.
    #[arg(long, default_value = "none")]
    pub order: OrderSpec,
    /// With --order: a new leaf of rank r among its parent's moves starts at
    /// B^r times its estimate (at most 64 times); 1 ignores the order.
    #[arg(long, default_value_t = 2)]
    pub order_base: u64,
    /// df-pn: how a node's summed number (disproof number where the prover
    /// moves, proof number where the other side does) adds up its
    /// children's: `standard` (their sum, the default) or `weak` (the
    /// largest plus one per other unsolved child: weak proof numbers, which
    /// do not count a transposed position once per path). The answers are
    /// exact either way. docs/solver.md.
    #[arg(long, default_value = "standard")]
    pub sum: halatafl_solver::ProofSum,
    /// df-pn, where the geese may step sideways: the percentage of each
    /// geese search's budget spent first on a search where they step
    /// forward and at most --forward-sideways times sideways (it has no
    /// cycles, so nearly all its results are kept); the full search gets
    /// the rest. 0 turns it off. The answers are exact either way.
    /// docs/solver.md.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub forward_share: u64,
    /// The sideways goose steps that search allows on any line (0: forward
    /// steps only).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=halatafl_solver::MAX_SIDEWAYS as i64))]
    pub forward_sideways: u8,
    /// With --order: the restricted search tries only the geese's K
    /// best-ranked moves at each of their turns (0, the default: all).
    /// A proof with fewer goose moves is still a proof.
    #[arg(long, default_value_t = 0)]
    pub forward_width: usize,
    /// df-pn, Two Foxes: the states each leaf's march question may expand,
    /// where the geese prove a win (0 turns it off). A march proves, without
    /// searching the foxes' moves, that the geese win by steps behind a
    /// wall the foxes cannot jump. The answers are exact either way.
    /// docs/solver.md.
    #[arg(long, default_value_t = SolverConfig::default().march_budget)]
    pub march: u64,
    /// The sideways goose steps a march may take on any line.
    #[arg(long, default_value_t = SolverConfig::default().march_sideways, value_parser = clap::value_parser!(u8).range(0..=halatafl_solver::MAX_MARCH_SIDEWAYS as i64))]
    pub march_sideways: u8,
    /// df-pn, where the geese prove: at their moves, the move that won a
    /// position with the same geese before (wherever the foxes stood)
    /// ranks first, and every other move K ranks lower than --order puts
    /// it (0, the default, turns it off). The answers are exact either
    /// way. docs/solver.md.
    #[arg(long, default_value_t = SolverConfig::default().geese_plan)]
    pub geese_plan: u8,
    /// One position, one thread: a guess at the winner (`foxes` or
    /// `geese`). Its search runs first with the whole budget, the other
    /// side's only with what is left if the first is disproven; without it
    /// the side to move goes first with half. The value is exact either
    /// way (`--deepest` guesses each game's winner itself).
    #[arg(long, conflicts_with = "from_games")]
    pub expect: Option<Side>,
    /// Suite mode: a games CSV (`halatafl match --csv`); its positions are
    /// solved, latest plies first, and the proven ones written to --out.
    /// With --method retro (classic games, with or without sideways steps):
    /// the tables are built once for the games' variant and every position
    /// of the games where some move loses value is a candidate; the suite
    /// gives each move's exact value, the stage and the difficulty, and
    /// --max-positions are drawn evenly over stages and difficulties.
    #[arg(long, conflicts_with = "fen")]
    pub from_games: Option<PathBuf>,
    /// Suite mode: the suite CSV to write (atomically, every 50 solved
    /// positions and at the end).
    #[arg(long, requires = "from_games")]
    pub out: Option<PathBuf>,
    /// Suite mode: stop after this many solved positions.
    #[arg(long, default_value_t = 1000)]
    pub max_positions: usize,
    /// Suite mode with --method retro: the seed of the draw of positions.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Suite mode: take every K-th ply of each game (counted from its end).
    #[arg(long, default_value_t = 1)]
    pub every: usize,
    /// Suite mode: skip positions with more geese than this.
    #[arg(long)]
    pub max_geese: Option<u32>,
    /// With --from-games, instead of a suite: how far before each game's
    /// end its positions are proven. Each game is walked back from its end
    /// in steps of --every plies with one table (so later proofs help
    /// earlier ones) until --patience positions in a row are not proven;
    /// prints the deepest proven distance per game and their median.
    #[arg(long, requires = "from_games", conflicts_with = "out")]
    pub deepest: bool,
    /// With --deepest: unproven positions in a row that end a game's walk.
    #[arg(long, default_value_t = 3, requires = "deepest")]
    pub patience: usize,
    /// Suite mode: keep only critical positions, where some legal move
    /// gives the proven value away (the only ones that can catch a mistake).
    #[arg(long, requires = "from_games")]
    pub critical_only: bool,
    /// Suite mode: leave out every position of this suite CSV (may be
    /// given more than once), so the new suite is held out from it: a set
    /// no agent was picked or tuned on.
    #[arg(long, requires = "out")]
    pub exclude: Vec<PathBuf>,
}

/// The most games `--replay-lines` replays: each is a whole game over the
/// rules, and `--compare-dag` keeps every position of them in memory.
const MAX_REPLAY_LINES: u64 = 100_000;
/// The most positions `--compare-dag` solves again.
const MAX_COMPARE_DAG: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Method {
    /// Depth-first proof-number search (every variant, draw rules exact).
    Dfpn,
    /// Memoised win/loss search of the acyclic classic game without sideways steps.
    Dag,
    /// Retrograde analysis of that game: every placement of up to the
    /// position's number of geese (3.1 GiB for 13, 7.1 for 15, 11.6 for 17).
    Retro,
}

impl SolveArgs {
    fn config(&self) -> SolverConfig {
        let d = SolverConfig::default();
        SolverConfig {
            budget_nodes: self.budget_nodes.unwrap_or(d.budget_nodes),
            tt_mib: self.tt_mb.unwrap_or(d.tt_mib),
            threads: self.threads,
            init: self.init,
            order_base: self.order_base,
            sum: self.sum,
            forward_share_percent: self.forward_share,
            forward_sideways: self.forward_sideways,
            forward_width: self.forward_width,
            march_budget: self.march,
            march_sideways: self.march_sideways,
            geese_plan: self.geese_plan,
            ..d
        }
    }
}

fn search_text(prover: Side, outcome: SearchOutcome) -> String {
    let state = match outcome {
        SearchOutcome::Proven => "yes".to_string(),
        SearchOutcome::Disproven => "no".to_string(),
        SearchOutcome::Unknown { pn, dn } => format!("unknown (root pn {pn}, dn {dn})"),
    };
    format!("{prover} win? {state}")
}

/// The `position:`, `value:` and `best:` lines both methods print.
fn print_value_and_best(
    position: &Position,
    value: Option<Value>,
    best: Option<impl std::fmt::Display>,
    budget: u64,
) {
    println!("position: {}", position.fen());
    match value {
        Some(v) => println!("value: {v}"),
        None => println!("value: unknown (budget of {budget} nodes spent)"),
    }
    match (value, best) {
        (_, Some(m)) => println!("best: {m}"),
        (Some(Value::Win(w)), None) if w != position.side() => {
            println!("best: none (every move loses)")
        }
        _ => println!("best: none"),
    }
}

fn print_solution(position: &Position, s: &Solution, budget: u64) {
    print_value_and_best(position, s.value, s.best, budget);
    let searches: Vec<String> = s.searches.iter().map(|&(p, o)| search_text(p, o)).collect();
    println!("searches: {}", searches.join("; "));
    print_nodes_and_time(s.nodes, s.elapsed);
    println!(
        "table: {} of {} entries used ({:.1}%), {} MiB",
        s.table.used,
        s.table.capacity,
        percent(s.table.used as f64, s.table.capacity as f64),
        s.table.bytes >> 20
    );
}

/// The `nodes:` and `time:` lines both methods print.
fn print_nodes_and_time(nodes: u64, elapsed: std::time::Duration) {
    let secs = elapsed.as_secs_f64();
    println!("nodes: {nodes}");
    println!(
        "time: {secs:.3} s ({:.0} nodes/s)",
        nodes as f64 / secs.max(1e-9)
    );
}

fn percent(part: f64, whole: f64) -> f64 {
    100.0 * part / whole.max(1.0)
}

pub fn run(args: SolveArgs) -> Result<()> {
    let config = args.config();
    anyhow::ensure!(
        args.layers_dir.is_none() || args.method == Method::Retro,
        "--layers-dir saves the layers of --method retro (with sideways steps)"
    );
    anyhow::ensure!(
        args.order == OrderSpec::None || args.method == Method::Dfpn,
        "--order ranks moves for df-pn (--method dfpn), not for --method {:?}",
        args.method
    );
    anyhow::ensure!(
        args.forward_width == 0 || args.order != OrderSpec::None,
        "--forward-width {} keeps the geese's best-ranked moves by --order, and --order is none",
        args.forward_width
    );
    anyhow::ensure!(
        args.expect.is_none() || args.method == Method::Dfpn,
        "--expect orders df-pn's two searches (--method dfpn); --method {:?} has none",
        args.method
    );
    anyhow::ensure!(
        args.expect.is_none() || args.threads == 1,
        "--expect orders the two searches of one thread; with --threads 2 they run at once"
    );
    if args.method == Method::Dag {
        anyhow::ensure!(
            args.from_games.is_none() && args.threads == 1,
            "--method dag solves one position on one thread (no --from-games, no --threads 2)"
        );
        return run_dag(&args, &config);
    }
    if args.method == Method::Retro {
        if args.from_games.is_some() {
            return build_exact_suite(&args);
        }
        return run_retro(&args);
    }
    if args.deepest {
        return deepest_proofs(&args, config);
    }
    if args.from_games.is_some() {
        anyhow::ensure!(
            args.out.is_some(),
            "--from-games needs --out SUITE (the suite to write), or --deepest"
        );
        return build_suite(&args, config);
    }
    let position = args.position.position()?;
    let registry = NetRegistry::default();
    let mut solver = new_solver(&config, &args, position.variant(), &registry)?;
    let solution = solver.solve_expecting(&position, args.expect);
    print_solution(&position, &solution, config.budget_nodes);
    if args.order != OrderSpec::None {
        println!("ranked: {} positions by --order", solver.ranked_positions());
    }
    if config.march_budget > 0 {
        println!(
            "marched: {} leaves proven by --march",
            solver.marched_leaves()
        );
    }
    Ok(())
}

/// A df-pn solver with `--order`'s ranking, if any, for positions of
/// `variant`.
fn new_solver(
    config: &SolverConfig,
    args: &SolveArgs,
    variant: Variant,
    registry: &NetRegistry,
) -> Result<Solver> {
    let solver = Solver::new(config.clone())?;
    Ok(match args.order.build(variant, registry)? {
        Some(order) => solver.with_order(order),
        None => solver,
    })
}

fn run_dag(args: &SolveArgs, config: &SolverConfig) -> Result<()> {
    let position = args.position.position()?;
    let mut solver = DagSolver::new(DagConfig {
        budget_nodes: config.budget_nodes,
        tt_mib: config.tt_mib,
    })?;
    let s = solver.solve(&position)?;
    print_dag_solution(&position, &s, config.budget_nodes);
    if s.winner.is_some() && args.replay_lines > 0 {
        let started = Instant::now();
        let replay = solver.replay_lines(&position, args.replay_lines as usize, 16)?;
        println!(
            "replayed: {} games over the rules, {} plies, {} positions re-solved, all with the same winner ({:.1} s)",
            replay.lines,
            replay.plies,
            replay.checked,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn run_retro(args: &SolveArgs) -> Result<()> {
    // Checked before the memory plan, which counts work buffers per thread.
    anyhow::ensure!(
        (1..=retro::MAX_THREADS).contains(&args.threads),
        "--threads {}: the retrograde method takes 1 to {} threads",
        args.threads,
        retro::MAX_THREADS
    );
    let position = args.position.position()?;
    let variant = position.variant();
    anyhow::ensure!(
        variant.is_classic(),
        "--method retro solves classic Fox and Geese (with or without sideways steps); this is {variant}: use the df-pn method"
    );
    if variant.sideways {
        anyhow::ensure!(
            args.compare_dag == 0,
            "--compare-dag needs the game without sideways steps (the DAG search has no draws)"
        );
        return run_retro_sideways(args, &position);
    }
    anyhow::ensure!(
        args.layers_dir.is_none(),
        "--layers-dir saves the layers of a build with sideways steps; without them the whole build takes minutes"
    );
    // Refuse a counter the tables cannot answer before building.
    check_position(&position)?;
    let corner_links = position.variant().corner_links;
    let geese = position.geese().count().max(4);
    let config = RetroConfig {
        threads: args.threads,
        memory_limit_mib: args.tt_mb.map(|m| m as u64),
        layers_dir: None,
    };
    println!(
        "tables: placements of 4 to {geese} geese, {} MiB, {} threads",
        retro::memory_bytes(geese).div_ceil(1 << 20),
        config.threads
    );
    let started = Instant::now();
    let tables = RetroTables::build(geese, corner_links, &config, |layer| {
        println!("{}", plain_layer_line(layer))
    })?;
    let built = started.elapsed();
    let v = tables.value(&position)?;
    print_value_and_best(&position, Some(Value::Win(v.winner)), v.best, 0);
    println!(
        "built: {:.1} s, {} MiB",
        built.as_secs_f64(),
        tables.bytes() >> 20
    );
    // The smaller classic starts are in the same tables.
    for start_geese in [13u8, 15, 17] {
        let Some(variant) = retro::classic_variant(start_geese, corner_links) else {
            continue;
        };
        let start = Position::start(variant);
        if start_geese as u32 <= geese && start.fen() != position.fen() {
            let s = tables.value(&start)?;
            let best = s.best.map_or("none".to_string(), |m| m.to_string());
            println!(
                "also in the tables: the {start_geese}-geese start: {} win (best: {best})",
                s.winner
            );
        }
    }
    if args.replay_lines > 0 {
        let started = Instant::now();
        let mut seen = Vec::new();
        let checked =
            tables.check_lines_with(&position, args.replay_lines as usize, 16, |p, w| {
                seen.push((*p, w))
            })?;
        println!(
            "checked: {} games over the rules, {} plies, {} positions re-derived from their children, all consistent ({:.1} s)",
            checked.lines,
            checked.plies,
            checked.checked,
            started.elapsed().as_secs_f64()
        );
        if args.compare_dag > 0 {
            compare_with_dag(&seen, args)?;
        }
    }
    Ok(())
}

/// `--method retro` with sideways steps: the four-plane tables of
/// `halatafl_solver::retro::sideways`, then lines over the real rules.
fn run_retro_sideways(args: &SolveArgs, position: &Position) -> Result<()> {
    let corner_links = position.variant().corner_links;
    let geese = position.geese().count().max(4);
    let config = RetroConfig {
        threads: args.threads,
        memory_limit_mib: args.tt_mb.map(|m| m as u64),
        layers_dir: args.layers_dir.clone(),
    };
    let (keep, need_mib, _) = retro_sideways::Keep::planned(geese, &config);
    let kept = match keep {
        retro_sideways::Keep::All => "every layer kept".to_string(),
        retro_sideways::Keep::Top => format!(
            "only what the next layer needs kept (every layer would need {} MiB)",
            retro_sideways::Keep::All.need_mib(geese, config.threads)
        ),
    };
    println!(
        "tables: placements of 4 to {geese} geese, sideways steps, {} MiB in all, and up to {} MiB of work, {} threads; {kept}: {need_mib} MiB at the peak",
        retro_sideways::memory_bytes(geese).div_ceil(1 << 20),
        retro_sideways::work_bytes(geese, config.threads).div_ceil(1 << 20),
        config.threads
    );
    if let Some(dir) = &args.layers_dir {
        match halatafl_solver::retro::saved_chains::find_saved(dir, corner_links, geese)? {
            Some(saved) => {
                println!(
                    "resuming above layer {} from {} (layers {} to {} built earlier, as they reported then):",
                    saved.geese,
                    saved.path.display(),
                    saved.stats.first().map_or(saved.geese, |s| s.geese),
                    saved.geese
                );
                for layer in &saved.stats {
                    println!("{} [saved]", sideways_layer_line(layer));
                }
            }
            None => println!(
                "no saved layer below {geese} geese in {}: building from 4 geese, saving each layer there",
                dir.display()
            ),
        }
    }
    let started = Instant::now();
    // A start's value is read when its layer is done: a build that keeps
    // only the top layer drops it later.
    let mut starts = Vec::new();
    let tables = SidewaysTables::build(geese, corner_links, &config, |layer, tables| {
        match layer.saved_in {
            Some(took) => println!(
                "{}; chain planes saved in {:.1} s",
                sideways_layer_line(layer),
                took.as_secs_f64()
            ),
            None => println!("{}", sideways_layer_line(layer)),
        }
        let Ok(variant) = Variant::classic(layer.geese as u8, true) else {
            return;
        };
        let start = Position::start(variant.with_corner_links(corner_links));
        if start.fen() != position.fen() {
            let line = tables.value(&start).map(|s| {
                let best = s.best.map_or("none".to_string(), |m| m.to_string());
                format!(
                    "also in the tables: the {}-geese start: {} (best: {best})",
                    layer.geese, s.value
                )
            });
            if let Ok(text) = &line {
                println!("{text}");
            }
            starts.push(line);
        }
    })?;
    for line in starts {
        line?;
    }
    let built = started.elapsed();
    let v = tables.value(position)?;
    print_value_and_best(position, Some(v.value), v.best, 0);
    println!(
        "built: {:.1} s, {} MiB",
        built.as_secs_f64(),
        tables.bytes() >> 20
    );
    if args.replay_lines > 0 {
        let started = Instant::now();
        let c = tables.check_lines(position, args.replay_lines as usize, 16)?;
        println!(
            "checked: {} games over the rules, {} plies, {} positions re-derived from their children, all consistent; {} ended with the tables' winner, {} drawn, {} stopped where the quiet counter passed what the tables answer or a capture left the layers kept ({:.1} s)",
            c.replay.lines,
            c.replay.plies,
            c.replay.checked,
            c.won,
            c.drawn,
            c.stopped,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// A layer's line of `--method retro` without sideways steps: its size, the
/// share of fox-to-move states the fox wins, and its build time.
fn plain_layer_line(layer: &retro::LayerStats) -> String {
    format!(
        "layer {:>2} geese: {:>13} placements, fox to move wins {:>6.2}% of {} states, {:.1} s",
        layer.geese,
        layer.placements,
        percent(layer.fox_wins as f64, layer.fox_to_move as f64),
        layer.fox_to_move,
        layer.elapsed.as_secs_f64()
    )
}

/// A layer's line of `--method retro --sideways`: its size, the shares of
/// each value with either side to move, and its build time.
fn sideways_layer_line(layer: &retro_sideways::SidewaysLayerStats) -> String {
    let share = |n: u64| percent(n as f64, layer.fox_to_move as f64);
    format!(
        "layer {:>2} geese: {:>13} placements; fox to move: foxes win {:>6.2}%, geese win {:>6.2}%, draw {:>6.2}%; geese to move: foxes win {:>6.2}%, geese win {:>6.2}% (of {} states each); levels settle within {} plies; {:.1} s",
        layer.geese,
        layer.placements,
        share(layer.fox_wins),
        share(layer.geese_wins),
        share(layer.fox_to_move - layer.fox_wins - layer.geese_wins),
        share(layer.geese_to_move_fox_wins),
        share(layer.geese_to_move_geese_wins),
        layer.fox_to_move,
        layer.longest.saturating_sub(1),
        layer.elapsed.as_secs_f64()
    )
}

/// Solves `--compare-dag` positions of the checked games, drawn at random
/// (seeded), again with the DAG search, an independent method over the
/// rules engine's own moves, and stops at the first disagreement.
fn compare_with_dag(seen: &[(Position, Side)], args: &SolveArgs) -> Result<()> {
    let budget = args.budget_nodes.unwrap_or(2_000_000);
    let mut solver = DagSolver::new(DagConfig {
        budget_nodes: budget,
        tt_mib: args.tt_mb.unwrap_or(256).min(1024),
    })?;
    let started = Instant::now();
    let (mut agreed, mut unknown, mut rng) = (0, 0, 0x5EED_u64);
    for _ in 0..(args.compare_dag as usize).min(seen.len()) {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let (p, retro) = &seen[((rng >> 33) % seen.len() as u64) as usize];
        match solver.solve(p)?.winner {
            None => unknown += 1,
            Some(w) if w == *retro => agreed += 1,
            Some(w) => anyhow::bail!(
                "{}: the tables hold the {retro} to win, the DAG search the {w}",
                p.fen()
            ),
        }
    }
    println!(
        "compared with the DAG search: {agreed} positions agree, {unknown} unknown within {budget} nodes, none differ ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn print_dag_solution(position: &Position, s: &DagSolution, budget: u64) {
    print_value_and_best(position, s.winner.map(Value::Win), s.best, budget);
    print_nodes_and_time(s.nodes, s.elapsed);
    println!(
        "table: {} of {} entries used ({:.1}%), {} replaced, {} MiB",
        s.table.used,
        s.table.capacity,
        percent(s.table.used as f64, s.table.capacity as f64),
        s.table.replaced,
        s.table.bytes >> 20
    );
}

/// A position of a recorded game, with where it came from.
struct Candidate {
    position: Position,
    game: usize,
    ply: usize,
    /// Plies from the position to its game's end: candidates are solved
    /// nearest the end first.
    to_end: usize,
}

/// The game of a row of `games_path`, replayed over the rules; an error
/// names the file, the game and the ply.
fn replay_row(games_path: &std::path::Path, row: &halatafl_arena::GameRow) -> Result<Game> {
    row.replay()
        .map_err(|why| anyhow::anyhow!("{}, game {}, {why}", games_path.display(), row.game))
}

/// The positions of the `--exclude` suites, as (FEN, variant) pairs: the
/// key both suite builders deduplicate by. A suite position of a variant
/// none of the games is (`game_variants`) is refused: such a suite
/// excludes nothing, and naming it is a mistake.
fn excluded_positions(
    args: &SolveArgs,
    game_variants: &HashSet<String>,
) -> Result<HashSet<(String, String)>> {
    let mut excluded = HashSet::new();
    for path in &args.exclude {
        let entries = halatafl_solver::suite::read_suite(path)
            .with_context(|| format!("reading --exclude {}", path.display()))?;
        for e in entries {
            let variant = e.position.variant().to_string();
            anyhow::ensure!(
                game_variants.contains(&variant),
                "{}, line {}: an --exclude suite holds {variant} (`{}`), but no game is: a suite of another game excludes nothing",
                path.display(),
                e.line,
                e.row.fen
            );
            excluded.insert((e.position.fen(), variant));
        }
    }
    Ok(excluded)
}

/// `solve --from-games G --deepest`: per game, the deepest position before
/// its end that df-pn proves within the budget (see `SolveArgs::deepest`).
fn deepest_proofs(args: &SolveArgs, config: SolverConfig) -> Result<()> {
    let games_path = args
        .from_games
        .as_ref()
        .expect("clap requires --from-games");
    anyhow::ensure!(args.every >= 1, "--every must be at least 1");
    anyhow::ensure!(args.patience >= 1, "--patience must be at least 1");
    let rows = read_game_rows(games_path)
        .with_context(|| format!("reading --from-games {}", games_path.display()))?;
    let started = Instant::now();
    let mut depths = Vec::new();
    let (mut all_nodes, mut all_ranked) = (0, 0);
    let registry = NetRegistry::default();
    for row in &rows {
        let game = replay_row(games_path, row)?;
        let positions = game.positions();
        let end = positions.len() - 1;
        // One table per game: the proofs of its later positions serve the
        // earlier ones, and games do not crowd each other out.
        let mut solver = new_solver(&config, args, positions[0].variant(), &registry)?;
        let (mut deepest, mut value, mut misses, mut proven, mut nodes) = (0, None, 0, 0, 0);
        // The first of the misses that ended the walk, with how far each
        // search got there: a proof number that stays put as the budget
        // grows is a search not closing in; one that shrinks wants nodes.
        let mut first_miss: Option<(usize, String)> = None;
        let game_started = Instant::now();
        // The game's winner is the likely winner of its late positions: its
        // search goes first with the whole budget (`Solver::solve_expecting`).
        let game_winner = game.outcome().and_then(|o| o.winner);
        let mut back = args.every;
        while back <= end && misses < args.patience {
            let position = &positions[end - back];
            back += args.every;
            if position.outcome_without_history().is_some() {
                continue;
            }
            let s = solver.solve_expecting(position, game_winner);
            nodes += s.nodes;
            match s.value {
                Some(v) => {
                    (deepest, value, misses) = (back - args.every, Some(v), 0);
                    proven += 1;
                    first_miss = None;
                }
                None => {
                    misses += 1;
                    if first_miss.is_none() {
                        let searches: Vec<String> =
                            s.searches.iter().map(|&(p, o)| search_text(p, o)).collect();
                        first_miss = Some((back - args.every, searches.join("; ")));
                    }
                }
            }
        }
        all_nodes += nodes;
        all_ranked += solver.ranked_positions();
        depths.push(deepest);
        println!(
            "game {}: {} ({}), {end} plies: deepest proven {deepest} plies before the end{}; {proven} positions proven, {nodes} nodes, {:.1} s",
            row.game,
            row.result,
            row.reason,
            value.map_or(String::new(), |v: halatafl_solver::Value| format!(" ({})", v.word())),
            game_started.elapsed().as_secs_f64()
        );
        if let Some((at, searches)) = first_miss {
            println!("  not proven {at} plies before the end: {searches}");
        }
    }
    anyhow::ensure!(!depths.is_empty(), "{}: no games", games_path.display());
    let mut sorted = depths.clone();
    sorted.sort_unstable();
    let median = if sorted.len() % 2 == 1 {
        sorted[sorted.len() / 2] as f64
    } else {
        (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) as f64 / 2.0
    };
    println!(
        "deepest proven per game: {depths:?}; median {median}, max {}, {} of {} games at 30 plies or more; {all_nodes} nodes in {:.0} s (budget {} per position, init {:?}, order {} base {}{}, {all_ranked} positions ranked, step {}, patience {})",
        sorted[sorted.len() - 1],
        depths.iter().filter(|&&d| d >= 30).count(),
        depths.len(),
        started.elapsed().as_secs_f64(),
        config.budget_nodes,
        config.init,
        args.order,
        config.order_base,
        if config.geese_plan > 0 {
            format!(", geese plan {}", config.geese_plan)
        } else {
            String::new()
        },
        args.every,
        args.patience
    );
    Ok(())
}

fn build_suite(args: &SolveArgs, config: SolverConfig) -> Result<()> {
    let games_path = args.from_games.as_ref().expect("checked by the caller");
    let out = args.out.as_ref().expect("clap requires --out");
    anyhow::ensure!(args.every >= 1, "--every must be at least 1");
    halatafl_cli::outputs::check_outputs(&[("--from-games", games_path)], &[("--out", out)])?;
    let rows = read_game_rows(games_path)
        .with_context(|| format!("reading --from-games {}", games_path.display()))?;
    let games = rows
        .iter()
        .map(|row| replay_row(games_path, row))
        .collect::<Result<Vec<_>>>()?;
    let variants = games
        .iter()
        .map(|g| g.positions()[0].variant().to_string())
        .collect();
    let excluded = excluded_positions(args, &variants)?;
    // Positions of every game, latest plies first (where proofs are cheap),
    // each position once, none of the --exclude suites'.
    let mut left_out = 0;
    let mut candidates = Vec::new();
    let mut seen = HashSet::new();
    for (row, game) in rows.iter().zip(&games) {
        let plies = game.positions().len();
        for (ply, position) in game.positions().iter().enumerate().rev() {
            if !(plies - 1 - ply).is_multiple_of(args.every)
                || position.outcome_without_history().is_some()
                || args.max_geese.is_some_and(|g| position.geese().count() > g)
            {
                continue;
            }
            let key = (position.fen(), position.variant().to_string());
            if !seen.insert(key.clone()) {
                continue;
            }
            if excluded.contains(&key) {
                left_out += 1;
                continue;
            }
            candidates.push(Candidate {
                position: *position,
                game: row.game,
                ply,
                to_end: row.plies.saturating_sub(ply),
            });
        }
    }
    // Interleave games, ply by ply from their ends, so the suite spans games.
    candidates.sort_by_key(|c| (c.to_end, c.game));
    eprintln!(
        "{} candidate positions from {} games ({} left out: in the --exclude suites)",
        candidates.len(),
        rows.len(),
        left_out
    );
    let registry = NetRegistry::default();
    let variant = candidates
        .first()
        .map_or(Variant::two_foxes(), |c| c.position.variant());
    let mut solver = new_solver(&config, args, variant, &registry)?;
    let started = Instant::now();
    let mut suite = Vec::new();
    let mut tried = 0;
    for c in &candidates {
        if suite.len() >= args.max_positions {
            break;
        }
        tried += 1;
        let solution = solver.solve(&c.position);
        let Some(value) = solution.value else {
            continue;
        };
        let (keeping, extra) = keeping_moves(&mut solver, &c.position, value, config.budget_nodes);
        let Some(keeping) = keeping else { continue };
        if keeping.is_empty() {
            anyhow::bail!(
                "no move keeps the proven value {value} of {}: solver bug",
                c.position.fen()
            );
        }
        if args.critical_only && keeping.len() == c.position.legal_moves().len() {
            continue;
        }
        suite.push(SuiteRow {
            fen: c.position.fen(),
            variant: c.position.variant().to_string(),
            value: value.word().to_string(),
            keeping_moves: keeping
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            legal_moves: c.position.legal_moves().len(),
            nodes: solution.nodes + extra,
            geese: c.position.geese().count(),
            ply: c.ply,
            game: c.game,
            stage: game_stage(c.ply, c.ply + c.to_end).to_string(),
            difficulty: difficulty(keeping.len(), c.position.legal_moves().len()).to_string(),
            move_values: String::new(),
        });
        // Every 50 positions the suite so far replaces the file, so a
        // long build that is stopped keeps what it has solved.
        if suite.len().is_multiple_of(50) {
            write_csv_atomic(out, &suite).with_context(|| format!("writing {}", out.display()))?;
            eprintln!(
                "{} solved of {tried} tried ({:.0} s), written to {}",
                suite.len(),
                started.elapsed().as_secs_f64(),
                out.display()
            );
        }
    }
    write_csv_atomic(out, &suite).with_context(|| format!("writing {}", out.display()))?;
    let count = |w: &str| suite.iter().filter(|r| r.value == w).count();
    println!(
        "{} positions solved of {tried} tried in {:.1} s: foxes {}, geese {}, draw {}; written to {}",
        suite.len(),
        started.elapsed().as_secs_f64(),
        count("foxes"),
        count("geese"),
        count("draw"),
        out.display()
    );
    Ok(())
}

/// Tables that answer a classic variant exactly: without sideways steps
/// (no draws) or with them.
enum ExactTables {
    Plain(RetroTables),
    Sideways(SidewaysTables),
}

impl ExactTables {
    fn row(
        &self,
        position: &Position,
        game: usize,
        ply: usize,
        plies: usize,
    ) -> Result<Option<SuiteRow>, ExactRowError<RetroError>> {
        match self {
            ExactTables::Plain(t) => exact_row(t, position, game, ply, plies),
            ExactTables::Sideways(t) => exact_row(t, position, game, ply, plies),
        }
    }
}

/// `solve --from-games --method retro`: a suite of classic positions with
/// every move's exact value, from the retrograde tables of the games'
/// variant (built once, in memory), drawn evenly over game stages and
/// difficulties.
fn build_exact_suite(args: &SolveArgs) -> Result<()> {
    let games_path = args.from_games.as_ref().expect("checked by the caller");
    let out = args.out.as_ref().expect("clap requires --out");
    anyhow::ensure!(
        (1..=retro::MAX_THREADS).contains(&args.threads),
        "--threads {}: the retrograde method takes 1 to {} threads",
        args.threads,
        retro::MAX_THREADS
    );
    anyhow::ensure!(args.every >= 1, "--every must be at least 1");
    anyhow::ensure!(
        args.max_positions >= 1,
        "--max-positions must be at least 1"
    );
    halatafl_cli::outputs::check_outputs(&[("--from-games", games_path)], &[("--out", out)])?;
    let rows = read_game_rows(games_path)
        .with_context(|| format!("reading --from-games {}", games_path.display()))?;
    anyhow::ensure!(!rows.is_empty(), "{}: no games", games_path.display());
    // Every game first: a bad record is refused before the tables are built.
    let mut games = Vec::new();
    let mut variant: Option<Variant> = None;
    for row in &rows {
        let v: Variant = row.variant.parse().map_err(|e: String| {
            anyhow::anyhow!("{}, game {}: {e}", games_path.display(), row.game)
        })?;
        anyhow::ensure!(
            v.is_classic(),
            "{}, game {}: {v}: --method retro builds suites of classic Fox and Geese (use the df-pn method for {v})",
            games_path.display(),
            row.game
        );
        if let Some(first) = variant {
            anyhow::ensure!(
                first == v,
                "{}, game {}: {v}, but the first game is {first}: one suite holds one variant",
                games_path.display(),
                row.game
            );
        }
        variant = Some(v);
        let mut game = Game::start_of(v);
        for (i, text) in row.moves.split_whitespace().enumerate() {
            game.play_str(text).with_context(|| {
                format!("{}, game {}, ply {}", games_path.display(), row.game, i + 1)
            })?;
        }
        games.push((row.game, game));
    }
    let variant = variant.expect("at least one game");
    let variant_name = variant.to_string();
    let excluded = excluded_positions(args, &HashSet::from([variant_name.clone()]))?;
    let geese = variant.geese as u32;
    let config = RetroConfig {
        threads: args.threads,
        memory_limit_mib: args.tt_mb.map(|m| m as u64),
        layers_dir: args.layers_dir.clone(),
    };
    let started = Instant::now();
    let tables = if variant.sideways {
        println!(
            "tables: placements of 4 to {geese} geese, sideways steps, {} MiB, {} threads",
            retro_sideways::memory_bytes(geese).div_ceil(1 << 20),
            config.threads
        );
        ExactTables::Sideways(SidewaysTables::build(
            geese,
            variant.corner_links,
            &config,
            |layer, _| println!("{}", sideways_layer_line(layer)),
        )?)
    } else {
        anyhow::ensure!(
            args.layers_dir.is_none(),
            "--layers-dir saves the layers of a build with sideways steps"
        );
        println!(
            "tables: placements of 4 to {geese} geese, {} MiB, {} threads",
            retro::memory_bytes(geese).div_ceil(1 << 20),
            config.threads
        );
        ExactTables::Plain(RetroTables::build(
            geese,
            variant.corner_links,
            &config,
            |layer| println!("{}", plain_layer_line(layer)),
        )?)
    };
    let (bytes, built) = match &tables {
        ExactTables::Plain(t) => (t.bytes(), started.elapsed()),
        ExactTables::Sideways(t) => (t.bytes(), started.elapsed()),
    };
    println!(
        "built: {:.1} s, {} MiB of tables",
        built.as_secs_f64(),
        bytes >> 20
    );
    // Every position once (no history: its value is the position's), from
    // the first game it appears in.
    let mut seen = HashSet::new();
    let (mut positions, mut unanswered, mut left_out) = (0usize, 0usize, 0usize);
    let mut cells: std::collections::BTreeMap<(String, String), Vec<SuiteRow>> = Default::default();
    for (index, game) in &games {
        let plies = game.positions().len() - 1;
        for (ply, position) in game.positions().iter().enumerate() {
            if !ply.is_multiple_of(args.every)
                || position.outcome_without_history().is_some()
                || args.max_geese.is_some_and(|g| position.geese().count() > g)
            {
                continue;
            }
            let fen = position.fen();
            if !seen.insert(fen.clone()) {
                continue;
            }
            if excluded.contains(&(fen, variant_name.clone())) {
                left_out += 1;
                continue;
            }
            positions += 1;
            match tables.row(position, *index, ply, plies) {
                Ok(Some(row)) => cells
                    .entry((row.stage.clone(), row.difficulty.clone()))
                    .or_default()
                    .push(row),
                Ok(None) => {}
                // A counter the sideways tables do not answer.
                Err(ExactRowError::Tables {
                    source: RetroError::SidewaysQuiet { .. },
                    ..
                }) => unanswered += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }
    let candidates: usize = cells.values().map(Vec::len).sum();
    eprintln!(
        "{positions} distinct positions in {} games ({left_out} more left out: in the --exclude suites): {candidates} with a move that loses value, {unanswered} at a quiet counter the tables do not answer",
        games.len()
    );
    // A seeded shuffle of each cell, then one row from each cell in turn:
    // small cells (hard endgames) are kept whole, large ones thinned.
    let mut rng = args.seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        rng >> 33
    };
    for rows in cells.values_mut() {
        for i in (1..rows.len()).rev() {
            rows.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        rows.reverse();
    }
    let mut suite = Vec::new();
    while suite.len() < args.max_positions && cells.values().any(|c| !c.is_empty()) {
        for rows in cells.values_mut() {
            if suite.len() < args.max_positions {
                if let Some(row) = rows.pop() {
                    suite.push(row);
                }
            }
        }
    }
    suite.sort_by_key(|r| (r.game, r.ply));
    write_csv_atomic(out, &suite).with_context(|| format!("writing {}", out.display()))?;
    let mut counts: std::collections::BTreeMap<(&str, &str), usize> = Default::default();
    for r in &suite {
        *counts.entry((&r.stage, &r.difficulty)).or_default() += 1;
    }
    let value_count = |w: &str| suite.iter().filter(|r| r.value == w).count();
    println!(
        "{} positions written to {} ({:.1} s in all): foxes {}, geese {}, draw {}; geese to move {}",
        suite.len(),
        out.display(),
        started.elapsed().as_secs_f64(),
        value_count("foxes"),
        value_count("geese"),
        value_count("draw"),
        suite.iter().filter(|r| r.fen.contains(" g ")).count()
    );
    for ((stage, difficulty), n) in counts {
        println!("  {stage:>9} {difficulty:>6}: {n}");
    }
    Ok(())
}
