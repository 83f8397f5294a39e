use crate::agents::{build_agent, AGENT_FORMS};
use anyhow::{Context, Result};
use clap::Args;
use halatafl_arena::stats::wilson_interval;
use halatafl_arena::{same_file, write_csv_atomic, write_target};
use halatafl_solver::accuracy::{group_tallies, judge_all, ms_per_move, Verdict};
use halatafl_solver::suite::{read_suite, SuiteEntry};
use std::path::PathBuf;

/// An agent's accuracy on a solved suite (`halatafl solve --from-games`):
/// its error rate (the share of positions where it plays a move whose
/// proven value is worse than the best move's) and, for agents that report
/// a value, value accuracy (its value read as win > 1/3, loss < -1/3, draw
/// between, against the proven one), each with its 95% Wilson interval, by
/// game stage, side to move and (suites with exact move values)
/// difficulty. "Critical"
/// positions are those where some legal move loses value.
#[derive(Args, Debug)]
#[command(after_help = AGENT_FORMS)]
pub struct AccuracyArgs {
    /// The agent spec, e.g. alphabeta:depth=4 or best:sims=100.
    pub agent: String,
    /// The suite CSV (fen, variant, value, keeping_moves, ...).
    #[arg(long)]
    pub suite: PathBuf,
    /// Worker threads, each with its own agent.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Seed of the agent's tie-breaks and noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object instead of the table: every group's counts and
    /// rates with their intervals, for scripts (the sweep driver reads it).
    #[arg(long)]
    pub json: bool,
    /// Also write a CSV of every position where the agent's move lost value:
    /// the suite line, position, stage, difficulty, side to move, the proven
    /// value, the move played and the value it leads to, the moves that keep
    /// the value, and the agent's own value where it reports one. Written
    /// atomically at the end; compare two agents' files by `line`.
    #[arg(long, value_name = "CSV")]
    pub mistakes: Option<PathBuf>,
}

/// `12.5% [9.1, 16.9]`: a share with its 95% Wilson interval.
fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "-".into();
    }
    let p = part as f64 / whole as f64;
    let (lo, hi) = wilson_interval(p, whole as u64, 1.96);
    format!("{:.1}% [{:.1}, {:.1}]", 100.0 * p, 100.0 * lo, 100.0 * hi)
}

pub fn run(args: AccuracyArgs) -> Result<()> {
    anyhow::ensure!(args.threads >= 1, "--threads must be at least 1");
    if let Some(path) = &args.mistakes {
        write_target(path).with_context(|| format!("--mistakes {}", path.display()))?;
        anyhow::ensure!(
            !same_file(path, &args.suite),
            "--mistakes {} is the suite itself: name another file",
            path.display()
        );
    }
    let entries = read_suite(&args.suite)?;
    let variant = entries[0].position.variant();
    // The spec is checked once, before any thread starts.
    build_agent(&args.agent, args.seed, variant)
        .with_context(|| format!("agent `{}`", args.agent))?;
    let make_agent = || build_agent(&args.agent, args.seed, variant);
    let verdicts = judge_all(&entries, args.threads, args.seed, &make_agent, &|| {})?;
    if let Some(path) = &args.mistakes {
        write_csv_atomic(path, &mistake_rows(&entries, &verdicts))
            .with_context(|| format!("--mistakes {}", path.display()))?;
    }
    let groups = group_tallies(&verdicts);
    let all = groups.last().expect("the `all` group").1;
    let (mean_ms, median_ms) = ms_per_move(&verdicts);
    if args.json {
        let groups: Vec<serde_json::Value> = groups
            .iter()
            .map(|(name, t)| {
                serde_json::json!({
                    "group": name,
                    "positions": t.positions,
                    "errors": t.errors,
                    "error_rate": rate_json(t.errors, t.positions),
                    "critical": t.critical,
                    "critical_errors": t.critical_errors,
                    "critical_error_rate": rate_json(t.critical_errors, t.critical),
                    "valued": t.valued,
                    "value_right": t.value_right,
                    "value_accuracy": rate_json(t.value_right, t.valued),
                })
            })
            .collect();
        let object = serde_json::json!({
            "agent": args.agent,
            "suite": args.suite.display().to_string(),
            "ms_per_move": {"mean": mean_ms, "median": median_ms},
            "groups": groups,
        });
        println!("{object}");
        return Ok(());
    }
    println!(
        "{} on {} ({} positions)",
        args.agent,
        args.suite.display(),
        all.positions
    );
    println!(
        "Time per move: {mean_ms:.2} ms mean, {median_ms:.2} ms median ({} thread{}).",
        args.threads,
        if args.threads == 1 { "" } else { "s" }
    );
    println!("An error is a move whose exact value is worse than the best move's; critical positions are those where some move is one. 95% Wilson intervals.");
    println!("| group | positions | error rate | critical positions | error rate (critical) | value accuracy | positions with a value |");
    println!("|---|---|---|---|---|---|---|");
    for (name, t) in &groups {
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} |",
            t.positions,
            share(t.errors, t.positions),
            t.critical,
            share(t.critical_errors, t.critical),
            share(t.value_right, t.valued),
            t.valued
        );
    }
    Ok(())
}

/// `{rate, lo, hi}` (Wilson 95%), or null for an empty group.
fn rate_json(part: usize, whole: usize) -> serde_json::Value {
    if whole == 0 {
        return serde_json::Value::Null;
    }
    let p = part as f64 / whole as f64;
    let (lo, hi) = wilson_interval(p, whole as u64, 1.96);
    serde_json::json!({"rate": p, "lo": lo, "hi": hi})
}

/// One row of `--mistakes`: a position where the agent's move lost value.
#[derive(serde::Serialize)]
struct MistakeRow {
    line: u64,
    fen: String,
    stage: String,
    difficulty: String,
    to_move: &'static str,
    value: String,
    played: String,
    played_value: String,
    keeping_moves: String,
    agent_value: Option<f32>,
}

/// The rows of `--mistakes`, in the suite's order (`verdicts[i]` is
/// `entries[i]`'s).
fn mistake_rows(entries: &[SuiteEntry], verdicts: &[Verdict]) -> Vec<MistakeRow> {
    entries
        .iter()
        .zip(verdicts)
        .filter(|(_, v)| !v.move_keeps)
        .map(|(entry, v)| {
            let played_value = entry
                .move_values
                .iter()
                .find(|(m, _)| *m == v.played)
                .map(|(_, value)| value.to_string())
                .unwrap_or_default();
            MistakeRow {
                line: entry.line,
                fen: entry.row.fen.clone(),
                stage: v.stage.clone(),
                difficulty: v.difficulty.clone(),
                to_move: v.mover,
                value: entry.value.to_string(),
                played: v.played.to_string(),
                played_value,
                keeping_moves: entry
                    .keeping
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                agent_value: v.agent_value,
            }
        })
        .collect()
}
