//! `report.md`: the run's config, strength, losses and self-play statistics
//! as tables a person reads top to bottom, with the plots linked in.

use crate::data::{eval_scores, Perspective, RunData, ScorePoint};
use halatafl_arena::margin_text;
use halatafl_arena::stats::{wilson_interval, Z95};
use std::fmt::Write;

fn score_cell(p: Option<&ScorePoint>) -> String {
    match p {
        None => "–".into(),
        Some(p) if p.record.games() == 0 => "–".into(),
        Some(p) => format!(
            "{:.3} [{:.3}, {:.3}] ({} games, +{} ={} -{})",
            p.score,
            p.low,
            p.high,
            p.record.games(),
            p.record.wins,
            p.record.draws,
            p.record.losses
        ),
    }
}

fn config_summary(run: &RunData, out: &mut String) {
    let v = |section: &str, key: &str| run.config_value(section, key).unwrap_or("?".into());
    let rows = [
        ("variant", v("game", "variant")),
        ("generations", v("run", "generations")),
        ("seed", v("run", "seed")),
        (
            "network",
            format!("{} ({})", v("network", "preset"), v("network", "precision")),
        ),
        (
            "search",
            format!(
                "{}, {} simulations ({} fast, full search with p = {})",
                v("search", "algorithm"),
                v("search", "simulations"),
                v("search", "fast_simulations"),
                v("search", "full_search_probability")
            ),
        ),
        (
            "generation 0",
            if v("bootstrap", "games") == "0" || v("bootstrap", "games") == "?" {
                "a seeded random network".to_string()
            } else {
                format!(
                    "{} expert games by `{}` ({} random opening plies), {} training steps; then {} of each batch from them for {} generations",
                    v("bootstrap", "games"),
                    v("bootstrap", "agent"),
                    v("bootstrap", "opening_plies"),
                    v("bootstrap", "steps"),
                    v("bootstrap", "replay_fraction"),
                    v("bootstrap", "replay_generations")
                )
            },
        ),
        (
            "self-play",
            format!(
                "{} games per generation, at most {} plies, {}",
                v("selfplay", "games"),
                v("selfplay", "max_plies"),
                match v("selfplay", "resign_threshold").parse::<f64>() {
                    Ok(t) if t > 0.0 => format!(
                        "resign below -{t} for {} moves",
                        v("selfplay", "resign_consecutive")
                    ),
                    Ok(_) => "no resignation".to_string(),
                    Err(_) => "resignation ?".to_string(),
                }
            ),
        ),
        (
            "training",
            format!(
                "{} steps per generation, batch {}, {} lr {} ({} schedule), window {} generations",
                v("train", "steps_per_generation"),
                v("train", "batch_size"),
                v("train", "optimizer"),
                v("train", "lr"),
                v("train", "schedule"),
                v("replay", "window_generations")
            ),
        ),
        (
            "evaluation",
            format!(
                "every {} generations, {} games per opponent ({}), {} simulations, {} opening plies",
                v("eval", "every"),
                v("eval", "games"),
                v("eval", "opponents"),
                v("eval", "simulations"),
                v("eval", "opening_plies")
            ),
        ),
    ];
    out.push_str("| setting | value |\n|---|---|\n");
    for (k, val) in rows {
        let _ = writeln!(out, "| {k} | {val} |");
    }
}

/// The whole Markdown report.
pub fn markdown_report(run: &RunData) -> String {
    let mut out = String::new();
    let name = run
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| run.dir.display().to_string());
    let _ = writeln!(out, "# Run report: {name}\n");
    let _ = writeln!(out, "Directory: `{}`\n", run.dir.display());
    if let Some(info) = &run.run_info {
        for key in ["started", "git_revision", "halatafl_version", "command"] {
            if let Some(value) = info.get(key).and_then(|v| v.as_str()) {
                let _ = writeln!(out, "- {}: `{value}`", key.replace('_', " "));
            }
        }
        out.push('\n');
    }
    out.push_str("## Config\n\n");
    config_summary(run, &mut out);
    let _ = writeln!(
        out,
        "\n<details><summary>config.toml</summary>\n\n```toml\n{}\n```\n</details>\n",
        run.config_text.trim_end()
    );

    out.push_str("## Strength\n\n");
    out.push_str(
        "Score of the trained network, (wins + draws/2) / games, with its 95% Wilson \
         interval, per generation against each opponent, overall and per side; the geese \
         margin per game pair (geese the network took as foxes minus geese it lost as geese \
         in the other game of the opening, with its 95% interval: how much, not only who, \
         won); the last column is each side's mean thinking time per move, for equal-time \
         comparisons.\n\n",
    );
    out.push_str("![strength](strength.svg)\n\n");
    let scores = eval_scores(&run.eval);
    if scores.is_empty() {
        out.push_str("No evaluation games yet.\n\n");
    }
    let mut opponents: Vec<&str> = Vec::new();
    for s in &scores {
        if !opponents.contains(&s.opponent.as_str()) {
            opponents.push(&s.opponent);
        }
    }
    for opponent in opponents {
        let _ = writeln!(out, "### vs {opponent}\n");
        out.push_str(
            "| generation | overall | as foxes | as geese | geese margin per pair [95%] | ms per move (network / opponent) |\n\
             |---|---|---|---|---|---|\n",
        );
        let mut generations: Vec<u32> = scores
            .iter()
            .filter(|s| s.opponent == opponent)
            .map(|s| s.generation)
            .collect();
        generations.dedup();
        for g in generations {
            let cell =
                |p: Perspective| {
                    score_cell(scores.iter().find(|s| {
                        s.generation == g && s.opponent == opponent && s.perspective == p
                    }))
                };
            let overall = scores.iter().find(|s| {
                s.generation == g && s.opponent == opponent && s.perspective == Perspective::Overall
            });
            let time = overall
                .map(|s| format!("{:.1} / {:.1}", s.ms_per_move, s.opponent_ms_per_move))
                .unwrap_or_else(|| "–".into());
            let margin = overall
                .map(|s| margin_text(&s.margin))
                .unwrap_or_else(|| "–".into());
            let _ = writeln!(
                out,
                "| {g} | {} | {} | {} | {margin} | {time} |",
                cell(Perspective::Overall),
                cell(Perspective::AsFoxes),
                cell(Perspective::AsGeese)
            );
        }
        out.push('\n');
    }

    accuracy_section(run, &mut out);

    out.push_str("## Training\n\n![training](training.svg)\n\n");
    match run.train.last() {
        None => out.push_str("No training steps yet.\n\n"),
        Some(last) => {
            let _ = writeln!(
                out,
                "Final losses (generation {}, step {}): policy {:.4}, value {:.4}, L2 {:.4}, \
                 total {:.4}; learning rate {:.3e}, gradient norm {:.3}.\n",
                last.generation,
                last.step,
                last.policy_loss,
                last.value_loss,
                last.l2_loss,
                last.total_loss,
                last.lr,
                last.grad_norm
            );
            out.push_str(
                "| generation | last step | policy | value | L2 | total | lr | samples in window |\n\
                 |---|---|---|---|---|---|---|---|\n",
            );
            let mut generations: Vec<u32> = run.train.iter().map(|r| r.generation).collect();
            generations.dedup();
            for g in generations {
                let r = run
                    .train
                    .iter()
                    .rev()
                    .find(|r| r.generation == g)
                    .expect("generation listed from these rows");
                let _ = writeln!(
                    out,
                    "| {g} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.3e} | {} |",
                    r.step,
                    r.policy_loss,
                    r.value_loss,
                    r.l2_loss,
                    r.total_loss,
                    r.lr,
                    r.window_samples
                );
            }
            out.push('\n');
        }
    }

    out.push_str("## Self-play\n\n![self-play](selfplay.svg)\n\n");
    if run.selfplay.is_empty() {
        out.push_str("No self-play games yet.\n");
    } else {
        out.push_str(
            "Resign false positives: of the games that would have resigned but were played \
             out, those the resigning side did not lose (95% Wilson interval).\n\n",
        );
        out.push_str(
            "| generation | games | samples | foxes / geese / draws | mean plies | end reasons \
             | resign false positives | games/s |\n|---|---|---|---|---|---|---|---|\n",
        );
        for r in &run.selfplay {
            let reasons: Vec<String> = [
                ("fewer-than-nine", r.fewer_than_nine),
                ("fewer-than-four", r.fewer_than_four),
                ("pen-filled", r.pen_filled),
                ("no-moves", r.no_moves),
                ("threefold", r.threefold),
                ("fifty-moves", r.fifty_moves),
                ("resigned", r.resigned),
                ("max-plies", r.max_plies),
            ]
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
            let resign = if r.resign_checked == 0 {
                "0 / 0".to_string()
            } else {
                let rate = r.resign_false as f64 / r.resign_checked as f64;
                let (lo, hi) = wilson_interval(rate, r.resign_checked as u64, Z95);
                format!(
                    "{} / {} = {rate:.3} [{lo:.3}, {hi:.3}]",
                    r.resign_false, r.resign_checked
                )
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} / {} / {} | {:.1} | {} | {} | {:.2} |",
                r.generation,
                r.games,
                r.samples,
                r.foxes_wins,
                r.geese_wins,
                r.draws,
                r.mean_plies,
                reasons.join(", "),
                resign,
                r.games_per_second
            );
        }
    }
    out
}

/// The error rates on the run's solved suite (`[eval] suite`), per
/// generation; nothing for runs without one.
fn accuracy_section(run: &RunData, out: &mut String) {
    if run.accuracy.is_empty() {
        return;
    }
    let suite = run
        .config_value("eval", "suite")
        .unwrap_or_else(|| "the suite".into());
    let _ = writeln!(
        out,
        "## Accuracy on `{suite}`\n\n\
         The share of the suite's positions where the network plays a move whose exact \
         value is worse than the best move's, with its 95% Wilson interval: its raw policy \
         (no search) and its search as in the evaluation games; hard positions are those \
         where one or very few moves keep the value.\n\n![accuracy](accuracy.svg)\n"
    );
    out.push_str(
        "| generation | positions | raw | search | raw, hard | search, hard | search, middle game |\n\
         |---|---|---|---|---|---|---|\n",
    );
    let mut generations: Vec<u32> = run.accuracy.iter().map(|r| r.generation).collect();
    generations.dedup();
    for g in generations {
        let cell = |agent: &str, group: &str| {
            run.accuracy
                .iter()
                .find(|r| r.generation == g && r.agent == agent && r.group == group)
                .map(|r| {
                    format!(
                        "{:.1}% [{:.1}, {:.1}]",
                        100.0 * r.error_rate,
                        100.0 * r.error_lo,
                        100.0 * r.error_hi
                    )
                })
                .unwrap_or_else(|| "–".into())
        };
        let positions = run
            .accuracy
            .iter()
            .find(|r| r.generation == g && r.group == "all")
            .map_or(0, |r| r.positions);
        let _ = writeln!(
            out,
            "| {g} | {positions} | {} | {} | {} | {} | {} |",
            cell("raw", "all"),
            cell("search", "all"),
            cell("raw", "difficulty hard"),
            cell("search", "difficulty hard"),
            cell("search", "stage middle")
        );
    }
    out.push('\n');
}
