//! `mcts:sims=2000` (random playouts, no network) against the random agent:
//! at least 9 of 10 games won on each side. Games run in parallel.

use halatafl_agent::{Agent, AgentSpec, Budget, RandomAgent};
use halatafl_mcts::MctsAgent;
use halatafl_rules::{Game, Side, Variant};
use rayon::prelude::*;

/// Plays one game; returns the winner (`None` for a draw).
fn play(mcts_side: Side, seed: u64) -> Option<Side> {
    let spec = AgentSpec::parse("mcts:sims=2000", "").unwrap();
    let mut mcts = MctsAgent::from_spec(&spec, seed).unwrap();
    let mut random = RandomAgent::new(seed);
    mcts.new_game(seed);
    random.new_game(seed ^ 0xA5A5);
    let mut game = Game::start_of(Variant::two_foxes());
    while game.outcome().is_none() {
        let agent: &mut dyn Agent = if game.position().side() == mcts_side {
            &mut mcts
        } else {
            &mut random
        };
        let decision = agent.choose(&game, &Budget::default());
        game.play(decision.mv).expect("agents play legal moves");
    }
    game.outcome().unwrap().winner
}

#[test]
fn mcts_2000_beats_random_on_both_sides() {
    for side in [Side::Foxes, Side::Geese] {
        let wins = (0..10u64)
            .into_par_iter()
            .filter(|&seed| play(side, 1000 + seed) == Some(side))
            .count();
        assert!(wins >= 9, "as {side}: won {wins} of 10");
    }
}
