//! Every agent kind, asked to move where the game is already over, answers
//! with an error that says how the game ended, never a panic: random games
//! played to their end (by every end rule they reach) and positions whose
//! end needs no history (the fifty-move count, too few geese, the pen full).

use halatafl_agent::Budget;
use halatafl_cli::agents::build_agent;
use halatafl_rules::{Game, Position, Variant};
use proptest::prelude::*;
use rand::prelude::IndexedRandom;
use rand::SeedableRng;

/// One spec of every kind, each with a budget small enough to be quick.
const SPECS: [&str; 7] = [
    "random",
    "alphabeta:depth=2",
    "mcts:sims=8",
    "mcts:sims=8,eval=uniform",
    "mcts:sims=8,gumbel=true",
    "best",
    "best:sims=4",
];

fn variants() -> [Variant; 4] {
    [
        Variant::two_foxes(),
        Variant::two_foxes().with_corner_links(true),
        Variant::classic(13, false).unwrap(),
        Variant::classic(15, true).unwrap(),
    ]
}

/// A random game of `variant`, played by uniform moves to its end.
fn finished_game(variant: Variant, seed: u64) -> Game {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::start_of(variant);
    while game.outcome().is_none() {
        let moves = game.position().legal_moves();
        game.play_unchecked(*moves.choose(&mut rng).unwrap());
    }
    game
}

fn refuses(game: &Game) {
    for spec in SPECS {
        let variant = game.position().variant();
        // The shipped network plays Two Foxes only.
        if spec.starts_with("best") && variant != Variant::two_foxes() {
            continue;
        }
        let mut agent = build_agent(spec, 1, variant).unwrap();
        let err = agent
            .try_choose(game, &Budget::default())
            .expect_err(spec)
            .to_string();
        let outcome = game.outcome().unwrap();
        assert!(
            err.contains("the game is over") && err.contains(outcome.reason.name()),
            "{spec}: {err}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn every_agent_refuses_the_end_of_a_random_game(seed in any::<u64>(), which in 0usize..4) {
        refuses(&finished_game(variants()[which], seed));
    }
}

#[test]
fn every_agent_refuses_positions_over_without_history() {
    let two_foxes = Variant::two_foxes();
    for (fen, variant) in [
        // The fifty-move rule: 100 quiet plies.
        ("F../.../.....GG/...G..G/.FG.G../G.G/G.G f 100", two_foxes),
        // Fewer than nine geese.
        ("F.F/.../......./GG...../......./GGG/GGG f 0", two_foxes),
        // The pen (the top arm's nine points) full.
        ("GGG/GGG/..GGG../F.....F/......./.../... f 0", two_foxes),
    ] {
        let position = Position::from_fen(fen, variant).unwrap();
        refuses(&Game::new(position));
    }
}
