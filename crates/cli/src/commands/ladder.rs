use crate::agents::{build_agent, AGENT_FORMS};
use crate::commands::match_cmd::{openings_text, progress, ArenaArgs};
use anyhow::{Context, Result};
use clap::Args;
use halatafl_arena::{ladder::split_specs, run_ladder, write_csv_atomic};

/// The default ladder: alpha-beta at doubling times per move, 25 ms to 1.6 s.
const DEFAULT_RUNGS: &str = "alphabeta:ms=25,alphabeta:ms=50,alphabeta:ms=100,alphabeta:ms=200,alphabeta:ms=400,alphabeta:ms=800,alphabeta:ms=1600";

/// Strength ladder: AGENT against every rung, and the rung time it is worth.
///
/// Plays AGENT against every rung, each opening once with each side, and
/// writes every game to one CSV (the rung is the opponent's spec; `summary`
/// reads it). Prints per rung AGENT's pair score with its 95% interval, its
/// score per side and both agents' time per move; then the time equivalent:
/// the rung's measured time per move (not its `ms=` budget) at which AGENT's
/// pair score crosses 0.5, interpolated in log time, with an interval from
/// the pair intervals' bounds (scores that rise again against a slower rung
/// are replaced by their non-increasing isotonic fit first); then per rung
/// and side, plies to the end, geese captured and end reasons. `--games` is
/// per rung and must be even; every rung gets the same openings.
#[derive(Args, Debug)]
#[command(after_help = AGENT_FORMS)]
pub struct LadderArgs {
    /// The agent to place on the ladder.
    pub agent: String,
    /// The rungs: agent specs separated by commas (a spec's own options stay
    /// with it: `alphabeta:depth=4,tt=64,random`); may be repeated.
    #[arg(long, default_value = DEFAULT_RUNGS)]
    pub rungs: Vec<String>,
    #[command(flatten)]
    pub arena: ArenaArgs,
}

pub fn run(args: LadderArgs) -> Result<()> {
    let config = args.arena.config()?;
    let variant = config.variant;
    let rungs: Vec<String> = args.rungs.iter().flat_map(|r| split_specs(r)).collect();
    let factory = move |spec: &str, seed: u64| build_agent(spec, seed, variant);
    let (rows, ladder) = run_ladder(
        &args.agent,
        &rungs,
        &factory,
        &config,
        &progress(rungs.len().saturating_mul(config.games)),
    )?;
    write_csv_atomic(&args.arena.csv, &rows)
        .with_context(|| format!("writing {}", args.arena.csv.display()))?;
    println!(
        "{} games, {variant}, seed {}, {}",
        rows.len(),
        config.seed,
        openings_text(&config)
    );
    print!("{ladder}");
    println!("games written to {}", args.arena.csv.display());
    Ok(())
}
