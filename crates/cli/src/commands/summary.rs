use anyhow::{bail, Context, Result};
use clap::Args;
use halatafl_arena::stats::{Moments, Record};
use halatafl_arena::{
    ends_in_order, read_game_rows, GameRow, MatchSummary, SideRecords, INTERVALS,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Summarise game CSVs (from `match`, `tournament`, or a run's eval.csv):
/// for every pair of agents, the summary `match` prints (per side, per game
/// pair, time per move), pooled over all the files given, so several matches
/// between the same agents add up to one result.
#[derive(Args, Debug)]
pub struct SummaryArgs {
    /// One or more CSV files with one row per game, in the arena's columns.
    #[arg(required = true)]
    pub csv: Vec<PathBuf>,
    /// Also print agent B's scores (agent A's mirrored), as before.
    #[arg(long)]
    pub both_agents: bool,
    /// Print one JSON object per pair of agents (JSON Lines) instead of the
    /// text: every number of the text, for scripts (the sweep driver reads
    /// it). Fields are described in docs/evaluation.md, "Summaries as JSON".
    #[arg(long)]
    pub json: bool,
}

/// The games of one pair of agents in one variant.
struct Group {
    /// Agent A: the foxes of the pair's first game in the first file.
    a: String,
    b: String,
    rows: Vec<GameRow>,
    files: Vec<usize>,
}

pub fn run(args: SummaryArgs) -> Result<()> {
    let mut groups: BTreeMap<(String, String, String), Group> = BTreeMap::new();
    let mut order = Vec::new();
    // Openings are numbered per match; give each (file, opening) its own number
    // so that only the two games of one opening in one file form a pair.
    let mut openings: BTreeMap<(usize, String, String, usize), usize> = BTreeMap::new();
    for (file, path) in args.csv.iter().enumerate() {
        let rows = read_game_rows(path).with_context(|| format!("reading {}", path.display()))?;
        if rows.is_empty() {
            bail!("{}: no games", path.display());
        }
        for mut row in rows {
            let (x, y) = if row.foxes <= row.geese {
                (row.foxes.clone(), row.geese.clone())
            } else {
                (row.geese.clone(), row.foxes.clone())
            };
            let key = (row.variant.clone(), x.clone(), y.clone());
            let next = openings.len();
            row.opening = *openings.entry((file, x, y, row.opening)).or_insert(next);
            let group = groups.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                Group {
                    a: row.foxes.clone(),
                    b: row.geese.clone(),
                    rows: Vec::new(),
                    files: Vec::new(),
                }
            });
            if group.files.last() != Some(&file) {
                group.files.push(file);
            }
            group.rows.push(row);
        }
    }
    if !args.json {
        println!("{} files; {INTERVALS}", args.csv.len());
    }
    for key in &order {
        let g = &groups[key];
        // With one spec on both sides only the game number tells the agents
        // apart, as `match` numbers them.
        let summary = if g.a == g.b {
            MatchSummary::from_match(&g.a, &g.b, &g.rows)
        } else {
            MatchSummary::from_rows(&g.a, &g.b, &g.rows, |row| row.foxes == g.a)
        };
        let files: Vec<String> = g
            .files
            .iter()
            .map(|&f| args.csv[f].display().to_string())
            .collect();
        if args.json {
            let object = json!({
                "variant": key.0,
                "games": g.rows.len(),
                "files": files,
                "agents": summary.agents.iter().map(side_json).collect::<Vec<_>>(),
            });
            println!("{object}");
            continue;
        }
        println!(
            "\n{} games, {}, from {}",
            g.rows.len(),
            key.0,
            files.join(", ")
        );
        if args.both_agents {
            print!("{summary:#}");
        } else {
            print!("{summary}");
        }
    }
    Ok(())
}

/// A record as `{games, wins, draws, losses, score, lo, hi}` (Wilson 95%).
fn record_json(r: &Record) -> Value {
    let (lo, hi) = r.interval();
    json!({"games": r.games(), "wins": r.wins, "draws": r.draws, "losses": r.losses,
           "score": r.score(), "lo": lo, "hi": hi})
}

/// A mean with its normal 95% interval, or null without values.
fn moments_json(m: &Moments) -> Value {
    if m.n == 0 {
        return Value::Null;
    }
    let (lo, hi) = m.interval();
    json!({"n": m.n, "mean": m.mean(), "sd": m.sd(), "lo": lo, "hi": hi})
}

/// A mean of values in [0, 1] with its normal 95% interval clipped to
/// [0, 1], as the text prints it; null without values.
fn share_json(m: &Moments) -> Value {
    if m.n == 0 {
        return Value::Null;
    }
    let (lo, hi) = m.share_interval();
    json!({"n": m.n, "mean": m.mean(), "lo": lo, "hi": hi})
}

/// How one side's games ended, in [`ends_in_order`]'s order:
/// `[{"result": "won", "reason": "pen-filled", "games": 33}, ...]`.
fn ends_json(ends: &BTreeMap<(i32, String), u64>) -> Value {
    Value::Array(
        ends_in_order(ends)
            .into_iter()
            .map(|(result, reason, games)| json!({"result": result, "reason": reason, "games": games}))
            .collect(),
    )
}

/// One agent's side of the summary, every number `match` prints.
fn side_json(a: &SideRecords) -> Value {
    let (lo, hi) = a.pairs.interval();
    json!({
        "spec": a.spec,
        "overall": record_json(&a.overall),
        "foxes": record_json(&a.foxes),
        "geese": record_json(&a.geese),
        "pairs": {"pairs": a.pairs.pairs(), "ptnml": a.pairs.counts, "score": a.pairs.score(), "lo": lo, "hi": hi},
        "taken_as_foxes": moments_json(&a.taken_as_foxes),
        "lost_as_geese": moments_json(&a.lost_as_geese),
        "margin": moments_json(&a.margin),
        "result_then_margin": share_json(&a.result_then_margin),
        "ends_as_foxes": ends_json(&a.ends_as_foxes),
        "ends_as_geese": ends_json(&a.ends_as_geese),
        "ms_per_move": a.time.ms_per_move(),
        "moves": a.time.moves,
    })
}
