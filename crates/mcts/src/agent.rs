//! The arena agent: a [`Search`] over halatafl's `Game` with any evaluator.

use crate::config::MctsConfig;
use crate::evaluator::{Evaluator, RolloutEvaluator, UniformEvaluator};
use crate::search::Search;
use crate::spec::{from_spec, LeafEval};
use halatafl_agent::{Agent, AgentSpec, Budget, Decision, SearchInfo, SpecError};
use halatafl_rules::Game;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// MCTS player. Keeps its tree between its moves: when the game it is asked
/// about continues the one it searched (same start, its moves a prefix), the
/// moves since are played into the tree instead of starting over.
pub struct MctsAgent {
    spec: String,
    config: MctsConfig,
    evaluator: Arc<dyn Evaluator<Game>>,
    search: Option<Search<Game>>,
    seed: u64,
    /// Set for network-free agents, whose evaluator is rebuilt (reseeded) per game.
    leaf_eval: Option<LeafEval>,
    /// Thinking time per move from the spec (`ms=`), used when the caller's
    /// budget gives none.
    movetime: Option<Duration>,
}

impl MctsAgent {
    /// An agent with any evaluator (a network agent passes its own).
    pub fn new(spec: String, config: MctsConfig, evaluator: Arc<dyn Evaluator<Game>>) -> MctsAgent {
        MctsAgent {
            spec,
            config,
            evaluator,
            search: None,
            seed: 0,
            leaf_eval: None,
            movetime: None,
        }
    }

    /// Thinks this long per move unless the caller's budget says otherwise.
    pub fn with_movetime(mut self, movetime: Option<Duration>) -> MctsAgent {
        self.movetime = movetime;
        self
    }

    /// Builds the network-free agent of an `mcts:` spec (rollouts unless
    /// `eval=uniform`).
    pub fn from_spec(spec: &AgentSpec, seed: u64) -> Result<MctsAgent, SpecError> {
        let parsed = from_spec(spec, &[])?;
        let mut agent =
            MctsAgent::new(spec.to_string(), parsed.config, parsed.eval.evaluator(seed));
        agent.seed = seed;
        agent.leaf_eval = Some(parsed.eval);
        Ok(agent.with_movetime(parsed.movetime))
    }

    /// The search settings this agent plays with.
    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// The search positioned at `game`, reusing the tree when `game` continues
    /// the searched one.
    fn search_for(&mut self, game: &Game) -> &mut Search<Game> {
        let continues = self.search.as_ref().is_some_and(|s| {
            let old = s.game();
            old.start_position() == game.start_position()
                && game.moves().len() >= old.moves().len()
                && game.moves()[..old.moves().len()] == *old.moves()
        });
        if continues {
            let search = self.search.as_mut().expect("checked above");
            let played = search.game().moves().len();
            for &mv in &game.moves()[played..] {
                search.play(mv);
            }
        } else {
            self.search = Some(Search::new(game.clone(), self.config.clone(), self.seed));
        }
        self.search.as_mut().expect("set above")
    }
}

impl Agent for MctsAgent {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn choose(&mut self, game: &Game, budget: &Budget) -> Decision {
        let sims = budget.sims.unwrap_or(self.config.sims);
        let deadline = budget
            .movetime
            .or(self.movetime)
            .map(|t| Instant::now() + t);
        let evaluator = Arc::clone(&self.evaluator);
        let search = self.search_for(game);
        let result = search.run(&*evaluator, sims, deadline, budget.stop.as_ref());
        let mv = search
            .choose_move()
            .expect("choose is only called for games that are not over");
        let pv = search.principal_variation(12);
        let value = result.value;
        let mut extra = format!(
            "wdl {:.3} {:.3} {:.3} tree {}",
            value.win, value.draw, value.loss, result.nodes
        );
        if let Some(p) = result.proven {
            extra.push_str(&format!(" proven {p:?}"));
        }
        search.play(mv);
        Decision {
            mv,
            value: Some(value.q()),
            info: SearchInfo {
                depth: 0,
                nodes: result.simulations as u64,
                pv,
                extra,
            },
        }
    }

    fn new_game(&mut self, seed: u64) {
        self.seed = seed;
        self.search = None;
        if let Some(eval) = self.leaf_eval {
            self.evaluator = eval.evaluator(seed);
        }
    }
}

impl LeafEval {
    /// The network-free evaluator this names, seeded with `seed` (the
    /// `mcts:` agent's, and any front end searching without a network).
    pub fn evaluator(self, seed: u64) -> Arc<dyn Evaluator<Game>> {
        match self {
            LeafEval::Rollout { max_plies } => Arc::new(RolloutEvaluator::new(seed, max_plies)),
            LeafEval::Uniform => Arc::new(UniformEvaluator),
        }
    }
}
