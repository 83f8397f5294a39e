//! Warm start from an expert: the imitation phase of expert iteration
//! (Anthony, Tian & Barber 2017, "Thinking Fast and Slow with Deep Learning
//! and Tree Search"; AlphaGo's supervised stage played the same part).
//!
//! Why: from a random network, Two Foxes self-play is lopsided. Random geese
//! hand the foxes captures, so the value head first learns "the foxes win";
//! once the geese learn to stop blundering they learn to shuffle sideways into
//! threefold repetition, and self-play settles on draws. Neither side ever sees
//! the geese *win*, which is what good geese do (alpha-beta against itself from
//! six random opening plies: the geese win 64% of games at depth 4 and 87% at
//! depth 5, mostly by filling the pen). An expert
//! that plays that plan from the first generation puts it in the data.
//!
//! How: before generation 1, the expert (a non-network agent, normally a
//! depth-limited alpha-beta, which is deterministic, so the run stays
//! reproducible) plays itself from random openings, as generation 0's
//! "self-play". Each position after the opening becomes a sample: a one-hot
//! policy target on the expert's move, and the game's result as the value
//! target. Generation 0's network is trained on them alone; in the following
//! generations a configured share of every batch is still drawn from them.

use crate::selfplay::wdl_for;
use crate::shard::StoredSample;
use halatafl_arena::{derive_seed, random_opening, ArenaError, GameJob, GameRow};
use halatafl_nn::{AuxTarget, GameEnd, Sample};
use halatafl_rules::{Game, Outcome, Variant};

/// The expert's games: each with its own random opening of `opening_plies`.
pub fn expert_jobs(
    agent: &str,
    games: usize,
    opening_plies: usize,
    variant: Variant,
    seed: u64,
) -> Result<Vec<GameJob>, ArenaError> {
    (0..games)
        .map(|i| {
            Ok(GameJob {
                game: i + 1,
                opening: i,
                start: if opening_plies > 0 {
                    random_opening(variant, opening_plies, derive_seed(seed, i as u64))?
                } else {
                    Game::start_of(variant)
                },
                foxes: agent.to_string(),
                geese: agent.to_string(),
                seed: derive_seed(seed ^ 0xe7_9e27, i as u64),
            })
        })
        .collect()
}

/// Training samples of one finished expert game, and how it ended: every
/// position after its random opening, with the move played as a one-hot
/// policy target and the result for the side to move as the value target
/// (also stored as the "search value", so `search_value_mix` leaves them
/// unchanged), and the auxiliary labels of a game the rules ended (the
/// plies to its end, for the moves-left head). The outcome comes from
/// replaying the moves, not from the row's
/// text, so a record whose moves do not end the game is refused.
pub fn samples_from_game(
    row: &GameRow,
    variant: Variant,
) -> Result<(Outcome, Vec<StoredSample>), String> {
    let where_ = || format!("expert game {}", row.game);
    let opening = row.opening_plies();
    let mut game = Game::start_of(variant);
    let mut out = Vec::new();
    for (ply, text) in row.moves.split_whitespace().enumerate() {
        let position = *game.position();
        let mv = position
            .parse_move(text)
            .map_err(|e| format!("{}, ply {}: `{text}`: {e}", where_(), ply + 1))?;
        if ply >= opening {
            let policy = position
                .legal_moves()
                .iter()
                .map(|m| if *m == mv { 1.0 } else { 0.0 })
                .collect();
            out.push(StoredSample {
                sample: Sample {
                    position,
                    repetitions: game.repetitions().min(255) as u8,
                    policy,
                    wdl: [0.0; 3],
                    aux: Default::default(),
                },
                search_wdl: [0.0; 3],
            });
        }
        game.play(mv)
            .map_err(|e| format!("{}, ply {}: `{text}`: {e}", where_(), ply + 1))?;
    }
    let outcome = game
        .outcome()
        .ok_or_else(|| format!("{}: its moves do not end the game", where_()))?;
    // The samples are consecutive positions up to the end, which the rules
    // reached: the last has one ply left, each earlier one more.
    let count = out.len();
    for (k, s) in out.iter_mut().enumerate() {
        s.sample.wdl = wdl_for(outcome.winner, s.sample.position.side());
        s.search_wdl = s.sample.wdl;
        s.sample.aux = AuxTarget::labels(GameEnd {
            plies_to_end: (count - k) as u32,
            ended_by_rules: true,
        });
    }
    Ok((outcome, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_arena::{play_games, MatchConfig};
    use halatafl_rules::Side;

    #[test]
    fn expert_samples_follow_the_game_and_skip_the_opening() {
        let variant = Variant::default();
        let jobs = expert_jobs("random", 3, 4, variant, 11).unwrap();
        assert_eq!(jobs.len(), 3);
        assert!(jobs.iter().all(|j| j.start.ply() == 4));
        assert_ne!(
            jobs[0].start.moves_text(),
            jobs[1].start.moves_text(),
            "each game has its own opening"
        );
        let factory =
            |spec: &str,
             seed: u64|
             -> Result<Box<dyn halatafl_agent::Agent>, halatafl_agent::SpecError> {
                assert_eq!(spec, "random");
                Ok(Box::new(halatafl_agent::RandomAgent::new(seed)))
            };
        let config = MatchConfig {
            threads: Some(1),
            ..MatchConfig::default()
        };
        let rows = play_games(&jobs, &factory, &config, &|_| {}).unwrap();
        for row in &rows {
            let (outcome, samples) = samples_from_game(row, variant).unwrap();
            assert_eq!(outcome.result_word(), row.result);
            assert_eq!(samples.len(), row.plies - 4);
            let final_side_to_move_value = samples.last().unwrap().sample.wdl;
            for s in &samples {
                assert_eq!(s.sample.policy.len(), s.sample.position.legal_moves().len());
                assert_eq!(s.sample.policy.iter().sum::<f32>(), 1.0);
                assert_eq!(s.sample.wdl, s.search_wdl);
            }
            // Consecutive samples are from opposite sides: decisive results flip.
            if row.result != "draw" {
                let n = samples.len();
                assert_eq!(samples[n - 2].sample.wdl[0], final_side_to_move_value[2]);
                let last_mover = samples[n - 1].sample.position.side();
                let expected_winner = if row.result == "foxes" {
                    Side::Foxes
                } else {
                    Side::Geese
                };
                assert_eq!(
                    final_side_to_move_value[0] == 1.0,
                    last_mover == expected_winner
                );
            } else {
                assert!(samples.iter().all(|s| s.sample.wdl == [0.0, 1.0, 0.0]));
            }
        }
    }

    #[test]
    fn a_corrupt_game_record_is_named() {
        let variant = Variant::default();
        let row = GameRow {
            game: 7,
            opening: 0,
            opening_moves: String::new(),
            foxes: "x".into(),
            geese: "x".into(),
            result: "foxes".into(),
            reason: "no-moves".into(),
            plies: 2,
            moves: "d4-d5 c7-c6".into(),
            foxes_seconds: 0.0,
            geese_seconds: 0.0,
            seed: 0,
            variant: variant.to_string(),
        };
        let err = samples_from_game(&row, variant).unwrap_err();
        assert!(
            err.contains("expert game 7") && err.contains("ply 1"),
            "{err}"
        );
    }
}
