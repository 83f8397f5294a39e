//! Playing strength: depth 4 against random on both sides, and a deeper search
//! against a shallower one over seeded openings. Every move is checked legal.

mod common;

use common::play_out;
use halatafl_agent::{Agent, RandomAgent};
use halatafl_alphabeta::{AlphaBeta, Limits, SearchConfig};
use halatafl_rules::{Game, Side, Variant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn alphabeta(depth: u32, seed: u64) -> AlphaBeta {
    let config = SearchConfig {
        tt_megabytes: 2,
        ..SearchConfig::default()
    };
    AlphaBeta::new(
        config,
        Limits {
            depth: Some(depth),
            movetime: None,
            stop: None,
        },
        seed,
    )
}

fn wins_against_random(variant: Variant, side: Side, games: u64) -> u64 {
    let mut wins = 0;
    for seed in 0..games {
        let mut ab = alphabeta(4, seed);
        let mut random = RandomAgent::new(1000 + seed);
        let start = Game::start_of(variant);
        let outcome = match side {
            Side::Foxes => play_out(start, &mut ab, &mut random),
            Side::Geese => play_out(start, &mut random, &mut ab),
        };
        wins += (outcome.winner == Some(side)) as u64;
    }
    wins
}

#[test]
fn depth_four_beats_random_on_each_side() {
    for side in [Side::Foxes, Side::Geese] {
        let wins = wins_against_random(Variant::two_foxes(), side, 40);
        assert!(wins >= 38, "{side}: {wins}/40 wins");
    }
}

#[test]
fn classic_fox_beats_random_geese() {
    // Classic with 13 geese that only step forward: the fox side. (The geese
    // side needs a plan far longer than depth 4 to corner even a random fox;
    // those games are still played here for move legality.)
    let classic = Variant::classic(13, false).unwrap();
    let wins = wins_against_random(classic, Side::Foxes, 10);
    assert!(wins >= 9, "classic foxes: {wins}/10 wins");
    wins_against_random(classic, Side::Geese, 4);
}

#[test]
fn deeper_beats_shallower() {
    // Ten seeded 4-ply random openings, each played with the deep side on
    // foxes and on geese.
    let mut score = 0.0;
    let mut games = 0;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for opening in 0..10u64 {
        let mut start = Game::start_of(Variant::two_foxes());
        for _ in 0..4 {
            let moves = start.position().legal_moves();
            start.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
        for deep_side in [Side::Foxes, Side::Geese] {
            let mut deep = alphabeta(5, opening);
            let mut shallow = alphabeta(2, opening);
            deep.new_game(opening);
            let outcome = match deep_side {
                Side::Foxes => play_out(start.clone(), &mut deep, &mut shallow),
                Side::Geese => play_out(start.clone(), &mut shallow, &mut deep),
            };
            score += (outcome.value_for(deep_side) as f64 + 1.0) / 2.0;
            games += 1;
        }
    }
    let fraction = score / games as f64;
    assert!(
        fraction >= 0.65,
        "depth 5 scored {fraction:.2} against depth 2"
    );
}
