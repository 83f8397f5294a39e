use crate::{Agent, Budget, Decision};
use halatafl_rules::Game;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Plays a uniformly random legal move. Seeded per game: reproducible.
pub struct RandomAgent {
    rng: ChaCha8Rng,
}

impl RandomAgent {
    /// An agent whose first game is seeded with `seed`; [`Agent::new_game`]
    /// reseeds it.
    pub fn new(seed: u64) -> RandomAgent {
        RandomAgent {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Agent for RandomAgent {
    fn spec(&self) -> String {
        "random".into()
    }

    fn choose(&mut self, game: &Game, _budget: &Budget) -> Decision {
        let moves = game.position().legal_moves();
        assert!(
            !moves.is_empty(),
            "choose called on a position without legal moves"
        );
        Decision::just(moves[self.rng.random_range(0..moves.len())])
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }
}
