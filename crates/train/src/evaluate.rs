//! Evaluation: a checkpoint against the configured opponents, as arena
//! games that become eval.csv rows. In turn ([`Run::eval_stage`]) for
//! `halatafl train`.

use crate::error::TrainError;
use crate::rows::{append_rows, read_csv_rows, EvalRow};
use crate::run::{bar, BaseFactory, Run, Stage};
use halatafl_agent::{Agent, AgentSpec, SpecError};
use halatafl_arena::{match_jobs, play_games, GameRow, MatchConfig, MatchSummary};
use halatafl_nn::NetRegistry;
use std::sync::Arc;

impl Run {
    /// The trained agent's spec for generation `g`.
    pub fn agent_spec(&self, generation: u32) -> String {
        format!(
            "net:ckpt={},sims={},batch={}",
            self.checkpoint(generation).display(),
            self.config.eval.simulations,
            self.config.eval.leaves_per_tree
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
        // `halatafl_nn::evaluator`), so a lone evaluation game is not slowed.
        let registry = Arc::new(NetRegistry::new(self.evaluator_config()));
        let device = cfg.run.device.clone();
        let precision = cfg.network.precision.clone();
        let factory = |spec: &str, seed: u64| -> Result<Box<dyn Agent>, SpecError> {
            if spec.starts_with("net:") {
                let mut parsed = AgentSpec::parse(spec, &halatafl_nn::agent::net_forms())?;
                parsed
                    .params
                    .entry("device".into())
                    .or_insert(device.clone());
                parsed
                    .params
                    .entry("precision".into())
                    .or_insert(precision.clone());
                halatafl_nn::build_net_agent(&parsed, seed, &registry)
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
            self.log(&format!("generation {generation} vs {name}:\n{summary}"));
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
    /// How the last evaluated generation scored against each opponent, per
    /// side, with intervals (from `eval.csv`).
    pub fn final_report(&self) -> Result<String, TrainError> {
        let rows: Vec<EvalRow> = read_csv_rows(&self.dir.join("eval.csv"))?;
        let Some(last) = rows.iter().map(|r| r.generation).max() else {
            return Ok("no evaluation games yet".into());
        };
        let me = self.agent_spec(last);
        let mut out = format!("generation {last} ({me}):\n");
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
            out.push_str(&format!(
                "vs {name}:\n{}\n",
                MatchSummary::from_match(&me, &other, &games)
            ));
        }
        Ok(out)
    }
}
