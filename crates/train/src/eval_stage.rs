//! Evaluation: a checkpoint against the configured opponents, as arena
//! games that become eval.csv rows. In turn ([`Run::eval_stage`]) for
//! `halatafl train`, or as the asynchronous evaluator
//! ([`Run::run_evaluator`], `halatafl stage evaluate --run DIR`).
//!
//! The evaluator evaluates every published checkpoint that is due (each
//! `eval.every`-th and the last) and has no rows in eval.csv yet, oldest
//! first, with the same games and seeds as `halatafl train`. A generation's
//! rows are written in one atomic replace after its last game, so a killed
//! evaluator leaves no partial generation, and a restarted one plays the
//! missing generations again. It exits once `finished.json` exists and every
//! due checkpoint is evaluated. Only the evaluator writes eval.csv.

use crate::error::TrainError;
use crate::run::{bar, BaseFactory, Run, Stage};
use halatafl_agent::{Agent, AgentSpec, SpecError};
use halatafl_arena::stats::wilson_interval;
use halatafl_arena::{match_jobs, play_games, GameRow, MatchConfig, MatchSummary};
use halatafl_dataio::run_rows::{append_rows, read_csv_rows, replace_generation_rows};
use halatafl_dataio::{AccuracyRow, EvalRow};
use halatafl_nn::{checkpoint, NetRegistry};
use halatafl_solver::accuracy::{group_tallies, judge_all};
use halatafl_solver::suite::{read_suite, SuiteEntry};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// Builds the evaluation's agents (network agents on the run's device and
/// precision, the others by the base factory), borrowing what it needs.
type AgentFactory<'a> = dyn Fn(&str, u64) -> Result<Box<dyn Agent>, SpecError> + Sync + 'a;

/// What evaluating one generation gives: its games as `eval.csv` rows, a
/// summary per opponent, and its `accuracy.csv` rows (empty without
/// `[eval] suite`).
pub(crate) struct GenerationEval {
    pub(crate) rows: Vec<EvalRow>,
    pub(crate) summaries: Vec<MatchSummary>,
    pub(crate) accuracy: Vec<AccuracyRow>,
}

impl Run {
    /// The trained agent's spec for generation `g`. With
    /// `search.moves_left_utility` > 0 it searches with the utility, if the
    /// checkpoint has the head (a run resumed with the head on evaluates
    /// its last checkpoint without one as before); otherwise the spec is
    /// what it always was.
    pub fn agent_spec(&self, generation: u32) -> String {
        let path = self.checkpoint(generation);
        let utility = self.config.search.moves_left_utility;
        let moves_left = if utility > 0.0
            && checkpoint::info(&path)
                .is_ok_and(|info| info.net.heads.has(halatafl_nn::AuxTarget::MovesLeft))
        {
            format!(",moves_left={utility}")
        } else {
            String::new()
        };
        // The run's search settings (root algorithm, c_puct, fpu, ...) go
        // into the spec, so the trained agent is evaluated with the search
        // it was trained with, minus the self-play noise and temperature.
        let search = crate::selfplay::eval_search_config(&self.config);
        let options: String = halatafl_mcts::spec_options(&search, &["sims", "batch"])
            .iter()
            .map(|o| format!(",{o}"))
            .collect();
        format!(
            "net:ckpt={},sims={},batch={}{options}{moves_left}",
            path.display(),
            search.sims,
            search.batch_size
        )
    }

    /// Plays checkpoint `generation` against every configured opponent and
    /// returns the games as eval.csv rows, writing nothing but the log.
    /// Seeds derive from the run's seed and the generation only, so a
    /// generation evaluated again (after a crash) plays the same openings.
    pub(crate) fn evaluate_generation(
        &self,
        generation: u32,
        base_factory: &BaseFactory,
    ) -> Result<GenerationEval, TrainError> {
        let cfg = &self.config;
        // The evaluator waits only for searches that are running (see
        // `halatafl_nn::inference_server`), so a lone evaluation game is not slowed.
        let registry = Arc::new(NetRegistry::new(self.evaluator_config()));
        let device = cfg.run.device.clone();
        let precision = self.precision()?.to_string();
        let variant = cfg.variant()?;
        let factory = |spec: &str, seed: u64| -> Result<Box<dyn Agent>, SpecError> {
            if halatafl_nn::agent::network_kind(spec) == Some("net") {
                let mut parsed = AgentSpec::parse(spec, &halatafl_nn::agent::net_forms())?;
                parsed
                    .params
                    .entry("device".into())
                    .or_insert(device.clone());
                parsed
                    .params
                    .entry("precision".into())
                    .or_insert(precision.clone());
                halatafl_nn::build_net_agent(&parsed, seed, variant, &registry)
            } else {
                base_factory(spec, seed)
            }
        };
        let me = self.agent_spec(generation);
        let mut summaries = Vec::new();
        let mut eval_rows = Vec::new();
        for opponent in &cfg.eval.opponents {
            if opponent == "previous" && generation == 0 {
                continue;
            }
            let (name, spec) = if opponent == "previous" {
                ("previous".to_string(), self.agent_spec(generation - 1))
            } else {
                (opponent.clone(), opponent.clone())
            };
            let match_config = MatchConfig {
                games: cfg.eval.games,
                seed: self.stage_seed(generation, Stage::Eval)
                    ^ halatafl_arena::derive_seed(7, summaries.len() as u64),
                openings: cfg.eval.opening_plies,
                threads: None,
                variant: cfg.variant()?,
                ..MatchConfig::default()
            };
            let jobs = match_jobs(&me, &spec, &match_config, 1)?;
            let match_config = MatchConfig {
                threads: Some(self.worker_threads(
                    jobs.len(),
                    &format!("generation {generation} evaluation vs {name}"),
                )),
                ..match_config
            };
            let pb = bar(jobs.len() as u64, &format!("eval {generation}"));
            pb.set_message(format!("vs {name}"));
            let rows = play_games(&jobs, &factory, &match_config, &|_r: &GameRow| pb.inc(1))?;
            pb.finish_and_clear();
            let summary = MatchSummary::from_match(&me, &spec, &rows);
            eval_rows.extend(rows.iter().map(|r| EvalRow::new(generation, &name, r)));
            // The console gets one line per opponent; the log the whole summary.
            self.log_file_only(&format!("generation {generation} vs {name}:\n{summary}"));
            eprintln!("generation {generation} vs {name}: {}", summary.one_line());
            summaries.push(summary);
        }
        let accuracy = self.judge_on_suite(generation, &factory)?;
        Ok(GenerationEval {
            rows: eval_rows,
            summaries,
            accuracy,
        })
    }

    /// The positions of `[eval] suite` judged each generation: all, or
    /// `eval.suite_positions` of them drawn once from the run's seed (the
    /// same every generation, so generations compare on equal ground), in
    /// the suite's order.
    fn suite_entries(&self) -> Result<Vec<SuiteEntry>, TrainError> {
        let cfg = &self.config.eval;
        let entries = read_suite(Path::new(&cfg.suite)).map_err(|why| {
            TrainError::Config(crate::config::ConfigError {
                key: "eval.suite",
                value: format!("{:?}", cfg.suite),
                expected: why.to_string(),
            })
        })?;
        let n = cfg.suite_positions;
        if n == 0 || n >= entries.len() {
            return Ok(entries);
        }
        let seed = halatafl_arena::derive_seed(self.config.run.seed, 0x5017e);
        let mut keyed: Vec<(u64, SuiteEntry)> = entries
            .into_iter()
            .map(|e| (halatafl_arena::derive_seed(seed, e.line), e))
            .collect();
        keyed.sort_by_key(|(k, _)| *k);
        keyed.truncate(n);
        keyed.sort_by_key(|(_, e)| e.line);
        Ok(keyed.into_iter().map(|(_, e)| e).collect())
    }

    /// Judges generation `generation`'s raw policy and search on `[eval]
    /// suite` (none: no rows), on the run's worker threads, each with its
    /// own agents; logs the error rates and returns `accuracy.csv` rows.
    fn judge_on_suite(
        &self,
        generation: u32,
        factory: &AgentFactory,
    ) -> Result<Vec<AccuracyRow>, TrainError> {
        if self.config.eval.suite.is_empty() {
            return Ok(Vec::new());
        }
        let entries = self.suite_entries()?;
        let seed = self.stage_seed(generation, Stage::Eval);
        let raw = format!("net:ckpt={}", self.checkpoint(generation).display());
        let agents = [("raw", raw), ("search", self.agent_spec(generation))];
        let threads = self.worker_threads(entries.len(), &format!("generation {generation} suite"));
        let mut rows = Vec::new();
        let mut line = Vec::new();
        for (name, spec) in &agents {
            let pb = bar(entries.len() as u64, &format!("suite {generation}"));
            pb.set_message(name.to_string());
            let make_agent = || factory(spec, seed);
            let verdicts = judge_all(&entries, threads, seed, &make_agent, &|| pb.inc(1));
            pb.finish_and_clear();
            let verdicts = verdicts.map_err(|e| TrainError::Stage {
                generation,
                why: format!("judging on the suite: {e}"),
            })?;
            for (group, t) in group_tallies(&verdicts) {
                let rate = t.errors as f64 / t.positions.max(1) as f64;
                let (lo, hi) = wilson_interval(rate, t.positions as u64, 1.96);
                if group == "all" {
                    line.push(format!(
                        "{name} {:.1}% [{:.1}, {:.1}]",
                        100.0 * rate,
                        100.0 * lo,
                        100.0 * hi
                    ));
                }
                rows.push(AccuracyRow {
                    generation,
                    agent: name.to_string(),
                    group,
                    positions: t.positions,
                    errors: t.errors,
                    error_rate: rate,
                    error_lo: lo,
                    error_hi: hi,
                    valued: t.valued,
                    value_right: t.value_right,
                });
            }
        }
        self.log(&format!(
            "generation {generation} on {} ({} positions): error rate {}",
            self.config.eval.suite,
            entries.len(),
            line.join(", ")
        ));
        Ok(rows)
    }

    /// Generation `generation`'s evaluation in turn (`halatafl train`).
    pub fn eval_stage(
        &self,
        generation: u32,
        base_factory: &BaseFactory,
    ) -> Result<Vec<MatchSummary>, TrainError> {
        let eval = self.evaluate_generation(generation, base_factory)?;
        append_rows(&self.dir.join("accuracy.csv"), eval.accuracy)?;
        append_rows(&self.dir.join("eval.csv"), eval.rows)?;
        Ok(eval.summaries)
    }
    /// How the last evaluated generation scored against each opponent: one
    /// line each, with the score over game pairs and its interval, the
    /// score per side and the time per move (from `eval.csv`; the log has
    /// the full summaries).
    pub fn final_report(&self) -> Result<String, TrainError> {
        let rows: Vec<EvalRow> = read_csv_rows(&self.dir.join("eval.csv"))?;
        let Some(last) = rows.iter().map(|r| r.generation).max() else {
            return Ok("no evaluation games yet".into());
        };
        let me = self.agent_spec(last);
        let mut entries = Vec::new();
        let mut opponents: Vec<&str> = Vec::new();
        for r in rows.iter().filter(|r| r.generation == last) {
            if !opponents.contains(&r.opponent.as_str()) {
                opponents.push(&r.opponent);
            }
        }
        for name in opponents {
            let games: Vec<GameRow> = rows
                .iter()
                .filter(|r| r.generation == last && r.opponent == name)
                .map(EvalRow::game_row)
                .collect();
            let other = if games[0].foxes == me {
                games[0].geese.clone()
            } else {
                games[0].foxes.clone()
            };
            entries.push((
                name.to_string(),
                MatchSummary::from_match(&me, &other, &games),
            ));
        }
        Ok(format!(
            "generation {last} ({me}):\n{}",
            halatafl_arena::scoreboard(&entries)
        ))
    }

    /// `halatafl stage evaluate --run DIR`: see the module doc.
    pub fn run_evaluator(&self, base_factory: &BaseFactory) -> Result<(), TrainError> {
        self.require_async()?;
        let _lock = self.exclusive("evaluator", "an evaluator")?;
        halatafl_nn::set_threads(self.config.run.torch_threads);
        let path = self.dir.join("eval.csv");
        // Generations evaluated by this process, also those with no rows
        // (no opponent applies), so they are not played again and again.
        let mut done: BTreeSet<u32> = BTreeSet::new();
        loop {
            // Read before the checkpoints: the learner writes the marker
            // after the last checkpoint, so none is missed.
            let finished = self.is_finished();
            done.extend(
                read_csv_rows::<EvalRow>(&path)?
                    .iter()
                    .map(|r| r.generation),
            );
            let newest = self.newest_checkpoint()?.unwrap_or(0);
            let due: Vec<u32> = (1..=newest)
                .filter(|&g| {
                    self.evaluation_due(g) && !done.contains(&g) && self.checkpoint(g).exists()
                })
                .collect();
            if due.is_empty() {
                if finished {
                    self.log("evaluator: every due checkpoint is evaluated; stopping");
                    return Ok(());
                }
                self.poll_pause();
                continue;
            }
            for g in due {
                let eval = self.evaluate_generation(g, base_factory)?;
                // accuracy.csv first: eval.csv's rows mark the generation done.
                replace_generation_rows(&self.dir.join("accuracy.csv"), g, eval.accuracy)?;
                replace_generation_rows(&path, g, eval.rows)?;
                done.insert(g);
            }
        }
    }
}
