//! Many searches stepped together: every round gathers leaves from each
//! unfinished search into one batch, makes one evaluator call, and hands the
//! answers back. This is how self-play fills large network batches from many
//! concurrent games; each search can add several leaves per round through
//! virtual loss (`batch_size`).
//!
//! ```
//! use halatafl_mcts::{Lockstep, MctsConfig, Search, UniformEvaluator};
//! use halatafl_rules::{Game, Variant};
//! let config = MctsConfig { sims: 64, ..MctsConfig::default() };
//! let mut searches: Vec<Search<Game>> = (0..4)
//!     .map(|i| Search::new(Game::start_of(Variant::two_foxes()), config.clone(), i))
//!     .collect();
//! for s in &mut searches {
//!     s.start_move(64);
//! }
//! let mut lockstep = Lockstep::new();
//! while lockstep.step(&mut searches, &UniformEvaluator) > 0 {}
//! for s in &mut searches {
//!     assert!(s.is_finished());
//!     let mv = s.choose_move().unwrap();
//!     s.play(mv); // tree reuse; then start_move again for the next ply
//! }
//! ```

use crate::evaluator::{Evaluations, Evaluator, LeafBatch};
use crate::game::SearchGame;
use crate::search::Search;

/// Reusable batch buffers for stepping searches together.
pub struct Lockstep<G: SearchGame> {
    batch: LeafBatch<G>,
    evals: Evaluations,
}

impl<G: SearchGame> Default for Lockstep<G> {
    fn default() -> Self {
        Lockstep {
            batch: LeafBatch::new(),
            evals: Evaluations::new(),
        }
    }
}

impl<G: SearchGame> Lockstep<G> {
    /// Empty buffers, grown by the first round.
    pub fn new() -> Self {
        Self::default()
    }

    /// One round over every unfinished search; returns the number of leaves
    /// evaluated, 0 once every search is finished (a search that gathers
    /// nothing has spent its budget: selections that reach finished games are
    /// backed up inside `gather` until a leaf needs the evaluator).
    pub fn step<E: Evaluator<G> + ?Sized>(
        &mut self,
        searches: &mut [Search<G>],
        evaluator: &E,
    ) -> usize {
        self.batch.clear();
        for s in searches.iter_mut() {
            if !s.is_finished() {
                s.gather(&mut self.batch);
            }
        }
        if !self.batch.is_empty() {
            self.evals.prepare(&self.batch);
            evaluator.evaluate(&self.batch, &mut self.evals);
            for s in searches.iter_mut() {
                s.apply(&self.batch, &self.evals);
            }
        }
        self.batch.len()
    }

    /// Steps until every search has finished its move.
    pub fn run<E: Evaluator<G> + ?Sized>(&mut self, searches: &mut [Search<G>], evaluator: &E) {
        while self.step(searches, evaluator) > 0 {}
    }
}
