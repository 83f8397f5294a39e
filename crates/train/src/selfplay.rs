//! Self-play: many games per worker thread stepped in lockstep, so their
//! leaves share network calls, and several workers feeding one inference
//! thread. Implements playout cap randomization (Wu 2019): a move gets a full
//! search with probability p (its position becomes a training sample), else a
//! fast one; and resignation with a measured false-resign rate: a share of the
//! games that would resign are played out, and a resignation counts as false
//! when the resigning side then does not lose.
//!
//! Each sample's `plies_left` (the moves-left head's target) is the plies
//! from its position to the game's end: 1 for the last position before the
//! end, one more for each earlier one. Only games the rules ended have it:
//! in a resigned game the end is where a player gave up, not where the game
//! would have ended, and a game cut at `max_plies` ends where the cut falls,
//! which nothing in the position shows (the input has no ply count); such
//! games' samples get `None` and do not train the head (their policy and
//! value targets are used as always).

use crate::config::RunConfig;
use crate::error::TrainError;
use crate::shard::StoredSample;
use halatafl_mcts::{Evaluator, Lockstep, MctsConfig, RootMode, Search, Wdl};
use halatafl_nn::Sample;
use halatafl_rules::{Game, Outcome, Position, Side, Variant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// How one self-play game ended.
#[derive(Clone, Debug, PartialEq)]
pub struct FinishedGame {
    pub index: usize,
    /// `foxes`, `geese` or `draw`.
    pub result: &'static str,
    /// A RULES.md reason, `resigned` or `max-plies`.
    pub reason: String,
    pub plies: usize,
    pub samples: usize,
    /// For played-out games that would have resigned: whether resigning would
    /// have been wrong (the would-be resigner did not lose).
    pub false_resign: Option<bool>,
    /// It began at a position drawn from earlier games, not at the start.
    pub drawn_start: bool,
}

/// Totals of one generation's self-play (or of one shard's games, which the
/// asynchronous workers store in the shard's header).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfPlayStats {
    pub games: usize,
    pub samples: usize,
    pub plies: usize,
    pub foxes_wins: usize,
    pub geese_wins: usize,
    pub draws: usize,
    pub reasons: BTreeMap<String, usize>,
    pub resign_checked: usize,
    pub resign_false: usize,
    pub seconds: f64,
    /// Games that began at a position drawn from earlier games
    /// (`selfplay.start_position_fraction`) rather than at the start.
    #[serde(default)]
    pub drawn_starts: usize,
}

impl SelfPlayStats {
    /// Adds another batch's totals (times add up: worker-seconds).
    pub fn merge(&mut self, other: &SelfPlayStats) {
        self.games += other.games;
        self.samples += other.samples;
        self.plies += other.plies;
        self.foxes_wins += other.foxes_wins;
        self.geese_wins += other.geese_wins;
        self.draws += other.draws;
        for (reason, n) in &other.reasons {
            *self.reasons.entry(reason.clone()).or_default() += n;
        }
        self.resign_checked += other.resign_checked;
        self.resign_false += other.resign_false;
        self.seconds += other.seconds;
        self.drawn_starts += other.drawn_starts;
    }

    pub(crate) fn add(&mut self, g: &FinishedGame) {
        self.games += 1;
        self.samples += g.samples;
        self.plies += g.plies;
        match g.result {
            "foxes" => self.foxes_wins += 1,
            "geese" => self.geese_wins += 1,
            _ => self.draws += 1,
        }
        *self.reasons.entry(g.reason.clone()).or_default() += 1;
        self.drawn_starts += g.drawn_start as usize;
        if let Some(f) = g.false_resign {
            self.resign_checked += 1;
            self.resign_false += f as usize;
        }
    }
}

pub fn search_config(config: &RunConfig) -> MctsConfig {
    let s = &config.search;
    MctsConfig {
        sims: s.simulations,
        root: if s.algorithm == "gumbel" {
            RootMode::Gumbel
        } else {
            RootMode::Puct
        },
        cpuct: s.c_puct,
        fpu_reduction: s.fpu_reduction,
        batch_size: s.leaves_per_tree,
        noise: true,
        dirichlet_alpha_scale: s.dirichlet_alpha_scale,
        dirichlet_epsilon: s.dirichlet_epsilon,
        gumbel_m: s.gumbel_m,
        temperature: s.temperature,
        temperature_plies: s.temperature_plies,
        final_temperature: 0.0,
        reuse_tree: true,
        moves_left_utility: s.moves_left_utility,
        ..MctsConfig::default()
    }
}

struct Slot {
    index: usize,
    rng: ChaCha8Rng,
    full: bool,
    /// Recorded samples with their search value, side to move and ply.
    pending: Vec<(Sample, [f32; 3], Side, u32)>,
    /// Consecutive own moves below the resign threshold, per side.
    low: [u32; 2],
    play_out: bool,
    would_resign: Option<Side>,
    /// The game began at a position drawn from earlier games.
    drawn: bool,
}

/// The win/draw/loss target of a finished game for `side`.
pub(crate) fn wdl_for(outcome_winner: Option<Side>, side: Side) -> [f32; 3] {
    match outcome_winner {
        None => [0.0, 1.0, 0.0],
        Some(w) if w == side => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
    }
}

/// The short-term target `[selfplay] result_half_life` asks for: the game's
/// result for `side`, its decisive part shrunk by `0.5^(plies_to_end /
/// half_life)` and the rest moved to the draw. A half-life of 0 keeps the
/// result as it is.
pub(crate) fn discounted_wdl_for(
    outcome_winner: Option<Side>,
    side: Side,
    plies_to_end: u32,
    half_life: f32,
) -> [f32; 3] {
    let [w, d, l] = wdl_for(outcome_winner, side);
    if half_life <= 0.0 {
        return [w, d, l];
    }
    let keep = 0.5f32.powf(plies_to_end as f32 / half_life);
    [w * keep, d + (w + l) * (1.0 - keep), l * keep]
}

fn side_index(s: Side) -> usize {
    (s == Side::Geese) as usize
}

/// Everything a worker needs, shared by all workers of a generation.
pub struct SelfPlayJob<'a, E: Evaluator<Game> + ?Sized> {
    pub config: &'a RunConfig,
    /// Worker threads (the run's `threads`, capped by the caller).
    pub threads: usize,
    pub variant: Variant,
    pub evaluator: &'a E,
    pub generation: u32,
    pub seed: u64,
    /// Games to play, numbered from 0 (their seeds derive from `seed` and
    /// the number).
    pub games: usize,
    /// Positions of earlier games that a share of the games
    /// (`selfplay.start_position_fraction`) begin at; empty: every game
    /// begins at the variant's start.
    pub starts: &'a [Position],
    /// Stores a worker thread's samples: when they reach
    /// `selfplay.samples_per_shard`, and when the thread runs out of games.
    pub write_shard: &'a (dyn Fn(ShardPiece) -> Result<(), TrainError> + Sync),
    /// Called after each finished game (progress bars).
    pub on_game: &'a (dyn Fn(&FinishedGame) + Sync),
}

/// One worker thread's samples, to be stored as a shard.
pub struct ShardPiece<'a> {
    /// The worker thread (0-based) ...
    pub thread: usize,
    /// ... and its how-many-th piece (0-based).
    pub part: usize,
    pub samples: &'a [StoredSample],
    /// The games the samples come from.
    pub games: usize,
}

/// Plays the job's games on `job.threads` workers; hands their samples to
/// `job.write_shard`.
pub fn run_generation<E: Evaluator<Game> + ?Sized>(
    job: &SelfPlayJob<E>,
) -> Result<SelfPlayStats, TrainError> {
    let started = Instant::now();
    let next_game = AtomicUsize::new(0);
    let totals = Mutex::new(SelfPlayStats::default());
    let threads = job.threads.max(1);
    let errors: Mutex<Vec<TrainError>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for worker in 0..threads {
            let (next_game, totals, errors) = (&next_game, &totals, &errors);
            scope.spawn(move || {
                if let Err(e) = worker_loop(job, worker, next_game, totals) {
                    errors.lock().expect("errors lock").push(e);
                }
            });
        }
    });
    if let Some(e) = errors.into_inner().expect("errors lock").into_iter().next() {
        return Err(e);
    }
    let mut stats = totals.into_inner().expect("totals lock");
    stats.seconds = started.elapsed().as_secs_f64();
    Ok(stats)
}

fn worker_loop<E: Evaluator<Game> + ?Sized>(
    job: &SelfPlayJob<E>,
    worker: usize,
    next_game: &AtomicUsize,
    totals: &Mutex<SelfPlayStats>,
) -> Result<(), TrainError> {
    let cfg = job.config;
    let base = search_config(cfg);
    let mut searches: Vec<Search<Game>> = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
    let mut lockstep = Lockstep::new();
    let mut shard: Vec<StoredSample> = Vec::new();
    let mut shard_games = 0usize;
    let mut part = 0usize;
    let flush = |shard: &mut Vec<StoredSample>,
                 games: &mut usize,
                 part: &mut usize|
     -> Result<(), TrainError> {
        if shard.is_empty() {
            return Ok(());
        }
        (job.write_shard)(ShardPiece {
            thread: worker,
            part: *part,
            samples: shard,
            games: *games,
        })?;
        shard.clear();
        *games = 0;
        *part += 1;
        Ok(())
    };
    loop {
        // Fill free slots with new games.
        while slots.len() < cfg.selfplay.concurrent_games {
            let index = next_game.fetch_add(1, Ordering::SeqCst);
            if index >= job.games {
                break;
            }
            let game_seed = job.seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut rng = ChaCha8Rng::seed_from_u64(game_seed);
            let play_out = rng.random_bool(cfg.selfplay.resign_playout_fraction);
            // Drawn only when asked for, so runs without it replay exactly.
            let fraction = cfg.selfplay.start_position_fraction;
            let drawn = fraction > 0.0 && !job.starts.is_empty() && rng.random_bool(fraction);
            let game = if drawn {
                Game::new(job.starts[rng.random_range(0..job.starts.len())])
            } else {
                Game::start_of(job.variant)
            };
            let mut search = Search::new(game, base.clone(), game_seed);
            let full = rng.random_bool(cfg.search.full_search_probability);
            search.set_noise(full);
            search.start_move(if full {
                cfg.search.simulations
            } else {
                cfg.search.fast_simulations
            });
            searches.push(search);
            slots.push(Slot {
                index,
                rng,
                full,
                pending: Vec::new(),
                low: [0, 0],
                play_out,
                would_resign: None,
                drawn,
            });
        }
        if slots.is_empty() {
            break;
        }
        // One round of leaves from every unfinished search; searches whose
        // move is done play it and start the next at once, so the network
        // batch stays full instead of draining while slow searches finish.
        lockstep.step(&mut searches, job.evaluator);
        let mut i = 0;
        while i < slots.len() {
            if !searches[i].is_finished() {
                i += 1;
                continue;
            }
            let search = &mut searches[i];
            let slot = &mut slots[i];
            let result = search.result();
            let game = search.game();
            let side = game.position().side();
            if slot.full {
                let sample = Sample {
                    position: *game.position(),
                    repetitions: game.repetitions().min(255) as u8,
                    policy: result.policy.clone(),
                    wdl: [0.0; 3],
                    plies_left: None,
                };
                let v: Wdl = result.value;
                slot.pending
                    .push((sample, [v.win, v.draw, v.loss], side, game.ply() as u32));
            }
            let mut ended: Option<(Option<Side>, String)> = None;
            if cfg.selfplay.resign_threshold > 0.0
                && result.value.q() < -cfg.selfplay.resign_threshold
            {
                slot.low[side_index(side)] += 1;
                if slot.low[side_index(side)] >= cfg.selfplay.resign_consecutive {
                    if slot.play_out {
                        slot.would_resign.get_or_insert(side);
                    } else {
                        ended = Some((Some(side.other()), "resigned".to_string()));
                    }
                }
            } else {
                slot.low[side_index(side)] = 0;
            }
            if ended.is_none() {
                let mv = search.choose_move().ok_or_else(|| TrainError::Stage {
                    generation: job.generation,
                    why: "self-play: the search found no move in a running game".into(),
                })?;
                search.play(mv);
                let game = search.game();
                if let Some(outcome) = game.outcome() {
                    let Outcome { winner, reason } = outcome;
                    ended = Some((winner, reason.name().to_string()));
                } else if game.ply() >= cfg.selfplay.max_plies {
                    ended = Some((None, "max-plies".to_string()));
                }
            }
            match ended {
                Some((winner, reason)) => {
                    let plies = searches[i].game().ply();
                    let slot = slots.swap_remove(i);
                    searches.swap_remove(i);
                    let samples = slot.pending.len();
                    let half_life = cfg.selfplay.result_half_life;
                    let ended_by_rules = !matches!(reason.as_str(), "resigned" | "max-plies");
                    for (mut sample, search_wdl, side, ply) in slot.pending {
                        let to_end = (plies as u32).saturating_sub(ply);
                        sample.wdl = discounted_wdl_for(winner, side, to_end, half_life);
                        sample.plies_left =
                            ended_by_rules.then(|| u16::try_from(to_end).ok()).flatten();
                        shard.push(StoredSample { sample, search_wdl });
                    }
                    shard_games += 1;
                    let finished = FinishedGame {
                        index: slot.index,
                        result: match winner {
                            Some(Side::Foxes) => "foxes",
                            Some(Side::Geese) => "geese",
                            None => "draw",
                        },
                        reason,
                        plies,
                        samples,
                        false_resign: slot.would_resign.map(|s| winner != Some(s.other())),
                        drawn_start: slot.drawn,
                    };
                    totals.lock().expect("totals lock").add(&finished);
                    (job.on_game)(&finished);
                    if shard.len() >= cfg.selfplay.samples_per_shard {
                        flush(&mut shard, &mut shard_games, &mut part)?;
                    }
                }
                None => {
                    let slot = &mut slots[i];
                    slot.full = slot.rng.random_bool(cfg.search.full_search_probability);
                    let sims = if slot.full {
                        cfg.search.simulations
                    } else {
                        cfg.search.fast_simulations
                    };
                    searches[i].set_noise(slots[i].full);
                    searches[i].start_move(sims);
                    i += 1;
                }
            }
        }
    }
    flush(&mut shard, &mut shard_games, &mut part)
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_mcts::UniformEvaluator;

    /// Plays `games` short self-play games with a uniform evaluator and
    /// returns their totals and samples.
    fn play(
        config: &RunConfig,
        starts: &[Position],
        games: usize,
    ) -> (SelfPlayStats, Vec<StoredSample>) {
        let (stats, samples, _) = play_recording(config, starts, games);
        (stats, samples)
    }

    /// [`play`], with the finished games in the order they finished.
    fn play_recording(
        config: &RunConfig,
        starts: &[Position],
        games: usize,
    ) -> (SelfPlayStats, Vec<StoredSample>, Vec<FinishedGame>) {
        let finished = Mutex::new(Vec::new());
        let samples = Mutex::new(Vec::new());
        let write = |piece: ShardPiece| -> Result<(), TrainError> {
            samples.lock().unwrap().extend_from_slice(piece.samples);
            Ok(())
        };
        let job = SelfPlayJob {
            config,
            threads: 1,
            variant: Variant::two_foxes(),
            evaluator: &UniformEvaluator,
            generation: 1,
            seed: 7,
            games,
            starts,
            write_shard: &write,
            on_game: &|g: &FinishedGame| finished.lock().unwrap().push(g.clone()),
        };
        let stats = run_generation(&job).unwrap();
        (
            stats,
            samples.into_inner().unwrap(),
            finished.into_inner().unwrap(),
        )
    }

    fn short_games() -> RunConfig {
        let mut config = RunConfig::default();
        config.search.simulations = 4;
        config.search.full_search_probability = 1.0;
        config.selfplay.concurrent_games = 4;
        config.selfplay.max_plies = 4;
        config.selfplay.resign_threshold = 0.0;
        config
    }

    #[test]
    fn drawn_games_begin_at_the_given_positions_and_their_targets_decay() {
        // Foxes to move with nine geese and a compulsory jump: every game
        // from here ends at its first move, won by the foxes.
        let late = Position::from_fen(
            "F../.../...F.../...G.../GGG.GG./GGG/... f 0",
            Variant::two_foxes(),
        )
        .unwrap();
        let mut config = short_games();
        config.selfplay.start_position_fraction = 0.5;
        config.selfplay.result_half_life = 1.0;
        let (stats, samples) = play(&config, &[late], 40);
        assert!(
            (8..=32).contains(&stats.drawn_starts),
            "about half of 40 games: {}",
            stats.drawn_starts
        );
        let from_late: Vec<&StoredSample> = samples
            .iter()
            .filter(|s| s.sample.position == late)
            .collect();
        assert_eq!(from_late.len(), stats.drawn_starts);
        // One ply before the foxes' win, with a half-life of one ply.
        for s in from_late {
            assert_eq!(s.sample.wdl, [0.5, 0.5, 0.0]);
        }
        assert_eq!(stats.foxes_wins, stats.drawn_starts);

        // At 0 (the default) no position is drawn and the stream of games
        // is the one a run without the option plays.
        config.selfplay.start_position_fraction = 0.0;
        let (stats, samples) = play(&config, &[late], 10);
        assert_eq!(stats.drawn_starts, 0);
        assert!(samples.iter().all(|s| s.sample.position != late));
        let (_, without_starts) = play(&config, &[], 10);
        assert_eq!(samples, without_starts);
    }

    #[test]
    fn plies_left_count_down_to_one_at_the_end_of_games_the_rules_ended() {
        // Long enough for games to end by the rules; every position is a sample.
        let mut config = short_games();
        config.selfplay.max_plies = 300;
        config.selfplay.concurrent_games = 2;
        let (_, samples, finished) = play_recording(&config, &[], 3);
        // One worker: each game's samples are stored together, in the order
        // the games finished, from the game's first position to its last.
        let mut at = 0;
        let mut by_rules = 0;
        for g in &finished {
            let game = &samples[at..at + g.samples];
            at += g.samples;
            assert_eq!(g.samples, g.plies, "every position is a sample");
            let plies: Vec<Option<u16>> = game.iter().map(|s| s.sample.plies_left).collect();
            if g.reason == "max-plies" {
                assert!(plies.iter().all(Option::is_none), "{plies:?}");
            } else {
                by_rules += 1;
                let want: Vec<Option<u16>> = (1..=g.plies as u16).rev().map(Some).collect();
                assert_eq!(plies, want, "game {} ended by {}", g.index, g.reason);
            }
        }
        assert_eq!(at, samples.len());
        assert!(by_rules > 0, "no game ended by the rules: {finished:?}");

        // A game cut at max_plies has no plies left on any sample, and one
        // that ends at its first move has 1.
        let late = Position::from_fen(
            "F../.../...F.../...G.../GGG.GG./GGG/... f 0",
            Variant::two_foxes(),
        )
        .unwrap();
        let mut config = short_games();
        config.selfplay.start_position_fraction = 1.0;
        let (_, samples, _) = play_recording(&config, &[late], 2);
        assert!(samples.iter().all(|s| s.sample.plies_left == Some(1)));
        let (_, samples, finished) = play_recording(&short_games(), &[], 2);
        assert!(finished.iter().all(|g| g.reason == "max-plies"));
        assert!(samples.iter().all(|s| s.sample.plies_left.is_none()));
    }

    #[test]
    fn the_half_life_moves_the_decisive_part_toward_a_draw() {
        let close = |a: [f32; 3], b: [f32; 3]| a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-6);
        // Off: the plain result, however far the end.
        let plain = discounted_wdl_for(Some(Side::Geese), Side::Foxes, 500, 0.0);
        assert_eq!(plain, [0.0, 0.0, 1.0]);
        // One half-life before a loss: half lost, half drawn; the winner mirrors it.
        let loser = discounted_wdl_for(Some(Side::Geese), Side::Foxes, 60, 60.0);
        assert!(close(loser, [0.0, 0.5, 0.5]), "{loser:?}");
        let winner = discounted_wdl_for(Some(Side::Geese), Side::Geese, 120, 60.0);
        assert!(close(winner, [0.25, 0.75, 0.0]), "{winner:?}");
        // The last move of a game keeps the whole result, and a draw stays a draw.
        assert_eq!(
            discounted_wdl_for(Some(Side::Foxes), Side::Foxes, 0, 60.0),
            [1.0, 0.0, 0.0]
        );
        assert_eq!(
            discounted_wdl_for(None, Side::Foxes, 90, 60.0),
            [0.0, 1.0, 0.0]
        );
        // Further from the end is always nearer a draw.
        let near = discounted_wdl_for(Some(Side::Geese), Side::Foxes, 10, 60.0);
        let far = discounted_wdl_for(Some(Side::Geese), Side::Foxes, 100, 60.0);
        assert!(far[2] < near[2] && far[1] > near[1]);
        assert!(close([far.iter().sum(), 0.0, 0.0], [1.0, 0.0, 0.0]));
    }
}
