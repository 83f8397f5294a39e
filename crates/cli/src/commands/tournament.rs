use crate::agents::{build_agent, AGENT_FORMS};
use crate::commands::match_cmd::{openings_text, progress, ArenaArgs};
use anyhow::{Context, Result};
use clap::Args;
use halatafl_arena::{run_tournament, stats::fmt_elo, write_csv_atomic};
use std::path::{Path, PathBuf};

/// Round robin: N games for every pair of agents (sides alternating); one CSV
/// row per game, and a rating table (maximum-likelihood Bradley-Terry Elo,
/// draws as half-wins, 95% intervals from the Fisher information) printed and
/// written as CSV.
#[derive(Args, Debug)]
#[command(after_help = AGENT_FORMS)]
pub struct TournamentArgs {
    /// Two or more distinct agent specs.
    #[arg(required = true, num_args = 2..)]
    pub agents: Vec<String>,
    #[command(flatten)]
    pub arena: ArenaArgs,
    /// Rating table CSV (default: `<csv stem>.ratings.csv` next to --csv).
    #[arg(long)]
    pub ratings: Option<PathBuf>,
}

fn default_ratings_path(games_csv: &Path) -> PathBuf {
    let stem = games_csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "games".into());
    games_csv.with_file_name(format!("{stem}.ratings.csv"))
}

pub fn run(args: TournamentArgs) -> Result<()> {
    let config = args.arena.config()?;
    let variant = config.variant;
    let factory = move |spec: &str, seed: u64| build_agent(spec, seed, variant);
    let pairs = args.agents.len() * (args.agents.len().saturating_sub(1)) / 2;
    let ratings_path = args
        .ratings
        .clone()
        .unwrap_or_else(|| default_ratings_path(&args.arena.csv));
    // Both outputs are checked before the first game, not after the last.
    halatafl_cli::outputs::check_outputs(
        &[],
        &[("--csv", &args.arena.csv), ("--ratings", &ratings_path)],
    )?;
    let (rows, ratings) = run_tournament(
        &args.agents,
        &factory,
        &config,
        &progress(pairs.saturating_mul(config.games)),
    )?;
    write_csv_atomic(&args.arena.csv, &rows)
        .with_context(|| format!("writing {}", args.arena.csv.display()))?;
    write_csv_atomic(&ratings_path, &ratings)
        .with_context(|| format!("writing {}", ratings_path.display()))?;

    let mut order: Vec<_> = ratings.iter().collect();
    order.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    let width = order
        .iter()
        .map(|r| r.agent.len())
        .max()
        .unwrap_or(5)
        .max(5);
    println!(
        "{} games, {variant}, seed {}, {}; Elo: Bradley-Terry maximum likelihood, mean 0, 95% intervals",
        rows.len(),
        config.seed,
        openings_text(&config)
    );
    println!(
        "{:<width$}  games  points  score     Elo  interval",
        "agent"
    );
    for r in order {
        println!(
            "{:<width$}  {:>5}  {:>6.1}  {:.3}  {:>6}  [{}, {}]",
            r.agent,
            r.games,
            r.points,
            r.score,
            fmt_elo(r.elo),
            fmt_elo(r.elo_low),
            fmt_elo(r.elo_high)
        );
    }
    println!(
        "games written to {}, ratings to {}",
        args.arena.csv.display(),
        ratings_path.display()
    );
    Ok(())
}
