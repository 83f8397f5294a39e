//! The Rust engine's own random-play speed, measured in the same process as
//! the Python figures it is compared with (`python -m halatafl.bench`).

use crate::args::Int;
use crate::{parse_variant, value_error};
use halatafl_rules::{Game, MoveList};
use pyo3::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Plays seeded uniformly random games in pure Rust, one after another on
/// one thread, until at least `plies` plies are played; every end rule is
/// applied after every ply, as the batched API does (the loop of
/// crates/rules/benches/rules.rs). Returns (plies, games, seconds), timed
/// with the GIL released.
#[pyfunction]
#[pyo3(signature = (plies, variant="two-foxes", seed=Int::from(0)))]
#[pyo3(text_signature = "(plies, variant=\"two-foxes\", seed=0)")]
pub fn rust_random_playouts(
    py: Python<'_>,
    plies: Int,
    variant: &str,
    seed: Int,
) -> PyResult<(u64, u64, f64)> {
    let variant = parse_variant(variant)?;
    let seed = seed.non_negative("seed")?;
    let plies = plies.non_negative("plies")?;
    if plies == 0 {
        return Err(value_error("plies must be at least 1"));
    }
    Ok(py.detach(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut moves = MoveList::new();
        let (mut played, mut games) = (0u64, 0u64);
        let started = Instant::now();
        while played < plies {
            let mut game = Game::start_of(variant);
            loop {
                moves.clear();
                game.position().generate(&mut moves);
                if game.outcome_given(!moves.is_empty()).is_some() {
                    break;
                }
                game.play_unchecked(moves[rng.random_range(0..moves.len())]);
                played += 1;
            }
            games += 1;
        }
        (played, games, started.elapsed().as_secs_f64())
    }))
}
