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
//!
//! With `[bootstrap] opponent`, a share of the games pits the expert
//! against a second agent (e.g. `random` on the foxes); only the expert's
//! moves become samples. Where experts playing themselves always end the
//! same way (classic Fox and Geese with 13 geese: the fox wins), that is
//! how positions won by the other side reach generation 0's value head.

use crate::config::OpponentSide;
use crate::selfplay::wdl_for;
use crate::shard::StoredSample;
use halatafl_arena::{derive_seed, random_opening, ArenaError, GameJob, GameRow};
use halatafl_nn::{AuxTarget, GameEnd, Sample};
use halatafl_rules::{Game, Outcome, Side, Variant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A second agent for a share of the expert's games.
#[derive(Clone, Copy, Debug)]
pub struct ExpertOpponent<'a> {
    /// Its spec (must differ from the expert's: a row's specs tell the sides apart).
    pub spec: &'a str,
    /// Share of the games against it.
    pub fraction: f64,
    /// The side it plays.
    pub side: OpponentSide,
}

/// The expert's games: each with its own random opening of `opening_plies`,
/// and, with `opponent`, the opponent on one side of its share of them.
pub fn expert_jobs(
    agent: &str,
    games: usize,
    opening_plies: usize,
    variant: Variant,
    seed: u64,
    opponent: Option<ExpertOpponent>,
) -> Result<Vec<GameJob>, ArenaError> {
    (0..games)
        .map(|i| {
            let mut foxes = agent.to_string();
            let mut geese = agent.to_string();
            if let Some(o) = opponent {
                // Each game draws from its own stream, so whether game `i`
                // meets the opponent does not depend on how many games there are.
                let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed ^ 0x0bb0_5e17, i as u64));
                if rng.random_bool(o.fraction) {
                    match o.side.draw(|| rng.random_bool(0.5)) {
                        Side::Foxes => foxes = o.spec.to_string(),
                        Side::Geese => geese = o.spec.to_string(),
                    }
                }
            }
            Ok(GameJob {
                game: i + 1,
                opening: i,
                start: if opening_plies > 0 {
                    random_opening(variant, opening_plies, derive_seed(seed, i as u64))?
                } else {
                    Game::start_of(variant)
                },
                foxes,
                geese,
                seed: derive_seed(seed ^ 0xe7_9e27, i as u64),
            })
        })
        .collect()
}

/// The side the expert `agent` played in `row`: `None` when it played both.
pub fn expert_side(row: &GameRow, agent: &str) -> Option<Side> {
    match (row.foxes == agent, row.geese == agent) {
        (true, false) => Some(Side::Foxes),
        (false, true) => Some(Side::Geese),
        _ => None,
    }
}

/// Training samples of one finished expert game, and how it ended: every
/// position after its random opening (only those with `only` to move, when
/// given: the expert's side against an opponent), with the move played as a one-hot
/// policy target and the result for the side to move as the value target
/// (also stored as the "search value", so `search_value_mix` leaves them
/// unchanged), and the auxiliary labels of a game the rules ended (the
/// plies to its end, for the moves-left head). The outcome comes from
/// replaying the moves, not from the row's
/// text, so a record whose moves do not end the game is refused.
pub fn samples_from_game(
    row: &GameRow,
    variant: Variant,
    only: Option<Side>,
) -> Result<(Outcome, Vec<StoredSample>), String> {
    let where_ = || format!("expert game {}", row.game);
    let opening = row.opening_plies();
    let mut game = Game::start_of(variant);
    let mut out = Vec::new();
    // The ply of each sample, for its distance to the end.
    let mut plies = Vec::new();
    for (ply, text) in row.moves.split_whitespace().enumerate() {
        let position = *game.position();
        let mv = position
            .parse_move(text)
            .map_err(|e| format!("{}, ply {}: `{text}`: {e}", where_(), ply + 1))?;
        if ply >= opening && only.is_none_or(|side| side == position.side()) {
            plies.push(ply);
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
    // The rules ended the game after its last move: a sample at ply k has
    // (plies - k) plies left.
    let end = game.ply();
    let geese_at_end = game.position().geese().count();
    for (s, ply) in out.iter_mut().zip(plies) {
        s.sample.wdl = wdl_for(outcome.winner, s.sample.position.side());
        s.search_wdl = s.sample.wdl;
        s.sample.aux = AuxTarget::labels(GameEnd {
            plies_to_end: (end - ply) as u32,
            ended_by_rules: true,
            geese_taken_to_end: Some(
                s.sample
                    .position
                    .geese()
                    .count()
                    .saturating_sub(geese_at_end),
            ),
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
        let jobs = expert_jobs("random", 3, 4, variant, 11, None).unwrap();
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
            let (outcome, samples) = samples_from_game(row, variant, None).unwrap();
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
    fn against_an_opponent_only_the_experts_moves_become_samples() {
        let variant = Variant::classic(13, false).unwrap();
        let jobs_with = |games, fraction, side| {
            let opponent = ExpertOpponent {
                spec: "random",
                fraction,
                side,
            };
            expert_jobs("alphabeta:depth=1", games, 0, variant, 5, Some(opponent)).unwrap()
        };
        let jobs = jobs_with(200, 0.5, OpponentSide::Either);
        let met = |side: Side| {
            jobs.iter()
                .filter(|j| match side {
                    Side::Foxes => j.foxes == "random",
                    Side::Geese => j.geese == "random",
                })
                .count()
        };
        let (as_foxes, as_geese) = (met(Side::Foxes), met(Side::Geese));
        assert!(
            (25..=75).contains(&as_foxes) && (25..=75).contains(&as_geese),
            "about 50 of 200 games each way: {as_foxes}, {as_geese}"
        );
        assert!(jobs
            .iter()
            .all(|j| j.foxes != "random" || j.geese != "random"));
        // The draw is per game: the first games do not change with the count.
        for (a, b) in jobs_with(20, 0.5, OpponentSide::Either).iter().zip(&jobs) {
            assert_eq!((&a.foxes, &a.geese), (&b.foxes, &b.geese));
        }
        let all_foxes = jobs_with(10, 1.0, OpponentSide::Foxes);
        assert!(all_foxes
            .iter()
            .all(|j| j.foxes == "random" && j.geese != "random"));

        let factory =
            |spec: &str,
             seed: u64|
             -> Result<Box<dyn halatafl_agent::Agent>, halatafl_agent::SpecError> {
                Ok(Box::new(halatafl_agent::RandomAgent::new(
                    seed ^ spec.len() as u64,
                )))
            };
        let config = MatchConfig {
            threads: Some(1),
            variant,
            ..MatchConfig::default()
        };
        let rows = play_games(&all_foxes, &factory, &config, &|_| {}).unwrap();
        for row in &rows {
            let expert = expert_side(row, "alphabeta:depth=1");
            assert_eq!(expert, Some(Side::Geese));
            let (outcome, samples) = samples_from_game(row, variant, expert).unwrap();
            let (_, every) = samples_from_game(row, variant, None).unwrap();
            assert_eq!(outcome.result_word(), row.result);
            assert!(samples
                .iter()
                .all(|s| s.sample.position.side() == Side::Geese));
            // The geese's positions of the whole game, with the same targets
            // (distance to the end included) as when both sides are kept.
            let geese: Vec<_> = every
                .iter()
                .filter(|s| s.sample.position.side() == Side::Geese)
                .collect();
            assert_eq!(samples.len(), geese.len());
            for (a, b) in samples.iter().zip(geese) {
                assert_eq!(a.sample.position, b.sample.position);
                assert_eq!(a.sample.wdl, b.sample.wdl);
                assert_eq!(a.sample.aux, b.sample.aux);
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
        let err = samples_from_game(&row, variant, None).unwrap_err();
        assert!(
            err.contains("expert game 7") && err.contains("ply 1"),
            "{err}"
        );
    }
}
