use crate::agents::{build_agent, AGENT_FORMS};
use crate::variant_args::VariantArgs;
use anyhow::{Context, Result};
use clap::Args;
use halatafl_arena::{
    run_match, write_csv_atomic, write_target, GameRow, MatchConfig, OpeningBook,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Flags shared by `match` and `tournament`.
#[derive(Args, Clone, Debug)]
pub struct ArenaArgs {
    /// Games to play (per pair of agents in a tournament). Sides alternate;
    /// with --openings, games 2k-1 and 2k share an opening.
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// CSV file with one row per game (written atomically at the end).
    #[arg(long)]
    pub csv: PathBuf,
    /// Seed of the openings and of the agents' tie-breaks.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Random plies played before the agents take over.
    #[arg(long, default_value_t = 0)]
    pub openings: usize,
    /// Openings from a book file instead of random ones: one opening per
    /// line, the moves from the start separated by spaces (# starts a
    /// comment line). Opening k starts games 2k+1 and 2k+2, so a book of N
    /// openings serves at most 2N games. See docs/matches.md ("Opening
    /// books").
    #[arg(long, value_name = "FILE", conflicts_with = "openings")]
    pub book: Option<PathBuf>,
    #[command(flatten)]
    pub variant: VariantArgs,
}

impl ArenaArgs {
    /// The match settings, checked; `--threads` above the cores is capped at
    /// them (more workers than cores only share them, and skew the agents'
    /// thinking time), with a note on standard error.
    pub fn config(&self) -> Result<MatchConfig> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut threads = self.threads;
        if let Some(t) = threads.filter(|&t| t > cores) {
            eprintln!(
                "note: --threads {t} is more than this machine's {cores} cores; using {cores}"
            );
            threads = Some(cores);
        }
        let variant = self.variant.variant()?;
        let book = match &self.book {
            None => None,
            Some(path) => Some(std::sync::Arc::new(
                OpeningBook::read(path, variant).context("--book")?,
            )),
        };
        let config = MatchConfig {
            games: self.games,
            seed: self.seed,
            openings: self.openings,
            book,
            threads,
            variant,
            ..MatchConfig::default()
        };
        config.validate().map_err(|e| anyhow::anyhow!("--{e}"))?;
        // A CSV path that cannot be written is refused before any game.
        write_target(&self.csv).with_context(|| format!("--csv {}", self.csv.display()))?;
        Ok(config)
    }
}

/// `openings 6` (random plies) or `book FILE (N openings)`, for the header
/// line of a match, tournament or ladder.
pub fn openings_text(config: &MatchConfig) -> String {
    match &config.book {
        Some(book) => format!("book {} ({} openings)", book.source, book.len()),
        None => format!("openings {}", config.openings),
    }
}

/// Prints one line per finished game to standard error.
pub fn progress(total: usize) -> impl Fn(&GameRow) + Sync {
    let done = AtomicUsize::new(0);
    move |row: &GameRow| {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        eprintln!(
            "[{n}/{total}] game {}: {} (foxes) vs {} (geese): {} ({}, {} plies)",
            row.game, row.foxes, row.geese, row.result, row.reason, row.plies
        );
    }
}

/// Play N games between two agents, sides alternating; write one CSV row per
/// game and print wins/draws/losses, score and Elo with 95% intervals.
#[derive(Args, Debug)]
#[command(after_help = AGENT_FORMS)]
pub struct MatchArgs {
    /// Agent A (the foxes in odd-numbered games).
    pub agent_a: String,
    /// Agent B (the foxes in even-numbered games).
    pub agent_b: String,
    #[command(flatten)]
    pub arena: ArenaArgs,
    /// Also print agent B's scores (agent A's mirrored), as before.
    #[arg(long)]
    pub both_agents: bool,
}

pub fn run(args: MatchArgs) -> Result<()> {
    let config = args.arena.config()?;
    let variant = config.variant;
    let factory = move |spec: &str, seed: u64| build_agent(spec, seed, variant);
    let (rows, summary) = run_match(
        &args.agent_a,
        &args.agent_b,
        &factory,
        &config,
        &progress(config.games),
    )?;
    write_csv_atomic(&args.arena.csv, &rows)
        .with_context(|| format!("writing {}", args.arena.csv.display()))?;
    println!(
        "{} games, {variant}, seed {}, {}; {}",
        rows.len(),
        config.seed,
        openings_text(&config),
        halatafl_arena::INTERVALS
    );
    if args.both_agents {
        print!("{summary:#}");
    } else {
        print!("{summary}");
    }
    println!("games written to {}", args.arena.csv.display());
    Ok(())
}
