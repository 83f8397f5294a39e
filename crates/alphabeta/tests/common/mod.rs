//! A minimal game loop for the search tests (the arena crate has the real one).

use halatafl_agent::{Agent, Budget};
use halatafl_rules::{Game, Outcome, Side};

/// Plays `game` to its end with `foxes` and `geese`, checking every move is
/// legal. Returns the outcome.
pub fn play_out(mut game: Game, foxes: &mut dyn Agent, geese: &mut dyn Agent) -> Outcome {
    loop {
        if let Some(outcome) = game.outcome() {
            return outcome;
        }
        let agent: &mut dyn Agent = match game.position().side() {
            Side::Foxes => &mut *foxes,
            Side::Geese => &mut *geese,
        };
        let decision = agent.choose(&game, &Budget::default());
        assert!(
            game.position().is_legal(decision.mv),
            "illegal move {} by {} in {}",
            decision.mv,
            agent.spec(),
            game.position()
        );
        game.play_unchecked(decision.mv);
    }
}
