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
use halatafl_arena::{match_jobs, play_games, GameRow, MatchConfig, MatchSummary};
use halatafl_dataio::run_rows::{append_rows, read_csv_rows, replace_generation_rows};
use halatafl_dataio::EvalRow;
use halatafl_nn::{checkpoint, NetRegistry};
use std::collections::BTreeSet;
use std::sync::Arc;

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
    ) -> Result<(Vec<EvalRow>, Vec<MatchSummary>), TrainError> {
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
                budget: Default::default(),
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
        Ok((eval_rows, summaries))
    }

    /// Generation `generation`'s evaluation in turn (`halatafl train`).
    pub fn eval_stage(
        &self,
        generation: u32,
        base_factory: &BaseFactory,
    ) -> Result<Vec<MatchSummary>, TrainError> {
        let (rows, summaries) = self.evaluate_generation(generation, base_factory)?;
        append_rows(&self.dir.join("eval.csv"), rows)?;
        Ok(summaries)
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
                let (rows, _) = self.evaluate_generation(g, base_factory)?;
                replace_generation_rows(&path, g, rows)?;
                done.insert(g);
            }
        }
    }
}
