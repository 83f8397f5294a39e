//! Self-play: many games per worker thread stepped in lockstep, so their
//! leaves share network calls, and several workers feeding one inference
//! thread. Implements playout cap randomization (Wu 2019): a move gets a full
//! search with probability p (its position becomes a training sample), else a
//! fast one; and resignation with a measured false-resign rate: a share of the
//! games that would resign are played out, and a resignation counts as false
//! when the resigning side then does not lose.
//!
//! Each sample's auxiliary labels come from how its game ended
//! ([`halatafl_nn::GameEnd`]; the labels' rules are in
//! [`halatafl_nn::targets`]): the moves-left label is the plies from its
//! position to the game's end, 1 for the last position before the end, and
//! only games the rules ended have it (a resigned game ends where a player
//! gave up, and a game cut at `max_plies` where the cut falls, which nothing
//! in the position shows: the input has no ply count); samples without a
//! label do not train that head (their policy and value targets are used as
//! always).
//!
//! With `selfplay.carry_over`, each worker has a share of the generation's
//! games to finish (`games / threads`, the first `games % threads` workers
//! one more) and keeps all its slots playing until it has: the games
//! still running then are returned ([`RunningGame`], see
//! [`crate::running`]) and go on in the next generation. Games are numbered
//! by worker (worker `w`'s `k`-th new game is game `w + k * threads`), so
//! which games a generation finishes does not depend on how the threads
//! are scheduled.
//!
//! With `selfplay.opponent`, a share of the games pits the network against a
//! fixed agent (an exploiter's games, in AlphaStar's terms): the agent's moves
//! are played straight into the game (and the network's search tree follows
//! them), and only the network's positions become samples, their value target
//! the result against that agent. With `selfplay.opponent_samples` the
//! agent's positions become samples too, at the rate of the network's full
//! searches: the policy target is the agent's move alone (behaviour cloning,
//! as in AlphaGo's supervised start, Silver et al. 2016, here mixed into
//! self-play), the value target the result for the agent's side.

use crate::config::RunConfig;
use crate::error::TrainError;
use crate::proven_targets::TargetProver;
use crate::running::RunningGame;
pub use crate::selfplay_stats::SelfPlayStats;
use crate::shard::StoredSample;

/// Builds non-network agents (`random`, `alphabeta:...`, `mcts:...`): the
/// expert, the self-play opponent and the evaluation opponents.
pub type BaseFactory =
    dyn Fn(&str, u64) -> Result<Box<dyn halatafl_agent::Agent>, halatafl_agent::SpecError> + Sync;
use halatafl_agent::{Agent, Budget};
use halatafl_mcts::{Evaluator, Lockstep, MctsConfig, RootMode, Search, Wdl};
use halatafl_nn::{AuxTarget, GameEnd, Sample};
use halatafl_rules::{Game, Outcome, Position, Side, Variant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// How one self-play game ended.
#[derive(Clone, Debug, PartialEq)]
pub struct FinishedGame {
    /// The game's number in its generation, from 0: the order it was
    /// begun in, or with `selfplay.carry_over` the order it finished in
    /// (by worker), since a carried game was begun in another generation.
    pub index: usize,
    /// `foxes`, `geese` or `draw`.
    pub result: &'static str,
    /// A docs/rules.md reason, `resigned` or `max-plies`.
    pub reason: String,
    /// Plies played in this game (from its drawn start, if it had one).
    pub plies: usize,
    /// Samples the game gave (positions of full searches by the network,
    /// and with `selfplay.opponent_samples` some of the opponent's).
    pub samples: usize,
    /// For played-out games that would have resigned: whether resigning would
    /// have been wrong (the would-be resigner did not lose).
    pub false_resign: Option<bool>,
    /// It began at a drawn position (of earlier games or a suite), not at the start.
    pub drawn_start: bool,
    /// The side `selfplay.opponent` played, in a game against it.
    pub opponent: Option<Side>,
    /// Every move, from the start position (or from `start`).
    pub moves: String,
    /// The position string of a drawn start; `None` for the variant's start.
    pub start: Option<String>,
    /// It began in an earlier generation (`selfplay.carry_over`).
    pub carried: bool,
    /// Plies played in this generation: `plies` less those played before
    /// it was carried in.
    pub plies_here: usize,
    /// Samples whose value target a proof search settled
    /// (`selfplay.prove_targets`).
    pub proven_samples: usize,
    /// Of those, samples whose policy target `selfplay.prove_policy` moved
    /// off moves not proven to keep the win.
    pub proven_policies: usize,
}

impl SelfPlayStats {
    /// Counts one finished game.
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
        if let Some(side) = g.opponent {
            self.opponent_games += 1;
            self.opponent_not_lost += (g.result != side.name()) as usize;
        }
        if let Some(f) = g.false_resign {
            self.resign_checked += 1;
            self.resign_false += f as usize;
        }
        self.carried_in += g.carried as usize;
        self.plies_played += g.plies_here;
        self.proven_samples += g.proven_samples;
        self.proven_policies += g.proven_policies;
    }
}

/// The self-play search from `[search]`: Dirichlet noise on, the opening
/// temperature, then the most visited move (final temperature 0), the tree
/// kept between moves. Each move then picks full or fast (playout cap
/// randomization): a fast search runs `fast_simulations` without noise.
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
        count_reused_visits: s.count_reused_visits,
        moves_left_utility: s.moves_left_utility,
        material_utility: s.material_utility,
        capture_plies: s.capture_plies,
        material_eval: s.material_eval,
        room_weight: s.room_weight,
        geese_draw: s.geese_draw,
        cheapest_win: s.cheapest_win,
        ..MctsConfig::default()
    }
}

/// The search of the trained agent in evaluation games: the run's search
/// (root algorithm, c_puct, fpu, Gumbel m) with `eval.simulations` and
/// `eval.leaves_per_tree`, without the self-play noise and temperature, and
/// with `eval.simulations` new simulations a move: `count_reused_visits` is
/// a self-play budget, and the agent spec the evaluation is played from has
/// no key for it.
pub fn eval_search_config(config: &RunConfig) -> MctsConfig {
    let play = MctsConfig::default();
    MctsConfig {
        sims: config.eval.simulations,
        batch_size: config.eval.leaves_per_tree,
        noise: play.noise,
        temperature: play.temperature,
        temperature_plies: play.temperature_plies,
        count_reused_visits: play.count_reused_visits,
        // The utility is a network agent's own option (`moves_left=`).
        moves_left_utility: play.moves_left_utility,
        ..search_config(config)
    }
}

/// A game's state beside its search: what its samples and end need.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    /// The game's number (its seed derives from it); with `carry_over` the
    /// finished games are numbered by when they finish instead.
    pub(crate) index: usize,
    /// The game's seed.
    pub(crate) seed: u64,
    /// Draws full or fast search for each move (and, once, the game's setup).
    pub(crate) rng: ChaCha8Rng,
    /// The move being searched is a full search.
    pub(crate) full: bool,
    /// Recorded samples with their search value, side to move and ply.
    pub(crate) pending: Vec<(Sample, [f32; 3], Side, u32)>,
    /// Consecutive own moves below the resign threshold, per side.
    pub(crate) low: [u32; 2],
    pub(crate) play_out: bool,
    pub(crate) would_resign: Option<Side>,
    /// The game began at a drawn position (of earlier games or a suite).
    pub(crate) drawn: bool,
    /// The side the fixed opponent plays in this game, if it is one against it.
    pub(crate) opponent: Option<Side>,
    /// The game began in an earlier generation.
    pub(crate) carried: bool,
    /// The game's ply when this generation took it over (0 for a new game).
    pub(crate) first_ply: usize,
}

impl Slot {
    /// Records the game's position (the side to move's) as a sample with
    /// this policy target and search value; its value target is set when
    /// the game ends.
    fn record(&mut self, game: &Game, policy: Vec<f32>, search_wdl: [f32; 3]) {
        let position = *game.position();
        let sample = Sample {
            position,
            repetitions: game.repetitions().min(255) as u8,
            policy,
            wdl: [0.0; 3],
            aux: Default::default(),
        };
        self.pending
            .push((sample, search_wdl, position.side(), game.ply() as u32));
    }
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
pub struct SelfPlayJob<'a, E: Evaluator<Game>> {
    /// The run's config.
    pub config: &'a RunConfig,
    /// Worker threads (the run's `threads`, capped by the caller).
    pub threads: usize,
    /// The variant whose start a game begins at when it does not begin at
    /// one of `starts`.
    pub variant: Variant,
    /// The network evaluators: worker `w`'s searches use
    /// `evaluators[w % len]` (one inference server per worker, or one that
    /// all share; see `network.inference_servers`). Not empty.
    pub evaluators: &'a [E],
    /// The generation being played (named in errors).
    pub generation: u32,
    /// The stage's seed: every game's and opponent's seed derives from it.
    pub seed: u64,
    /// Games to play, numbered from 0 (their seeds derive from `seed` and
    /// the number).
    pub games: usize,
    /// Positions of earlier games that a share of the games
    /// (`selfplay.start_position_fraction`) begin at; empty: every game
    /// begins at the variant's start.
    pub starts: &'a [Position],
    /// Suite and book positions that a share of the games
    /// (`selfplay.start_suite_fraction`) begin at, drawn before `starts`;
    /// empty: none.
    pub suite_starts: &'a [Position],
    /// Stores a worker thread's samples: when they reach
    /// `selfplay.samples_per_shard`, and when the thread runs out of games.
    pub write_shard: &'a (dyn Fn(ShardPiece) -> Result<(), TrainError> + Sync),
    /// Called after each finished game (progress bars).
    pub on_game: &'a (dyn Fn(&FinishedGame) + Sync),
    /// Builds `selfplay.opponent` (one per worker thread); needed when
    /// `selfplay.opponent_fraction` > 0.
    pub agents: Option<&'a BaseFactory>,
    /// Games an earlier generation left running (`selfplay.carry_over`):
    /// each goes on on worker `worker % threads`, before its new games.
    pub carried: &'a [RunningGame],
}

/// What a generation's self-play did.
pub struct Played {
    /// Its finished games' totals.
    pub stats: SelfPlayStats,
    /// With `selfplay.carry_over`, the games still running, by worker and
    /// in each worker's order; empty without it.
    pub running: Vec<RunningGame>,
}

/// What one worker owes of a generation with `selfplay.carry_over`: its
/// share of the games (`games / threads`, the first `games % threads`
/// workers one more), numbered from `first`; without it the worker plays
/// games until none is left and keeps their numbers.
struct Share {
    carry: bool,
    size: usize,
    first: usize,
    finished: usize,
}

impl Share {
    fn new(carry: bool, games: usize, threads: usize, worker: usize) -> Share {
        let (each, extra) = (games / threads, games % threads);
        Share {
            carry,
            size: each + (worker < extra) as usize,
            first: worker * each + worker.min(extra),
            finished: 0,
        }
    }

    /// Counts a finished game and, with carry_over, numbers it by when it
    /// finished.
    fn count(&mut self, slot: &mut Slot) {
        if self.carry {
            slot.index = self.first + self.finished;
        }
        self.finished += 1;
    }

    /// The worker has finished its share (never without carry_over).
    fn done(&self) -> bool {
        self.carry && self.finished >= self.size
    }
}

/// One worker thread's samples, to be stored as a shard.
pub struct ShardPiece<'a> {
    /// The worker thread (0-based) ...
    pub thread: usize,
    /// ... and its how-many-th piece (0-based).
    pub part: usize,
    /// The samples, in the order their games finished.
    pub samples: &'a [StoredSample],
    /// The games the samples come from.
    pub games: usize,
}

/// Plays the job's games on `job.threads` workers; hands their samples to
/// `job.write_shard`.
pub fn run_generation<E: Evaluator<Game>>(job: &SelfPlayJob<E>) -> Result<Played, TrainError> {
    let started = Instant::now();
    let next_game = AtomicUsize::new(0);
    let totals = Mutex::new(SelfPlayStats::default());
    let threads = job.threads.max(1);
    let errors: Mutex<Vec<TrainError>> = Mutex::new(Vec::new());
    let mut running: Vec<Vec<RunningGame>> = vec![Vec::new(); threads];
    std::thread::scope(|scope| {
        for (worker, left) in running.iter_mut().enumerate() {
            let (next_game, totals, errors) = (&next_game, &totals, &errors);
            scope.spawn(move || match worker_loop(job, worker, next_game, totals) {
                Ok(games) => *left = games,
                Err(e) => errors.lock().expect("errors lock").push(e),
            });
        }
    });
    if let Some(e) = errors.into_inner().expect("errors lock").into_iter().next() {
        return Err(e);
    }
    let mut stats = totals.into_inner().expect("totals lock");
    stats.seconds = started.elapsed().as_secs_f64();
    Ok(Played {
        stats,
        running: running.into_iter().flatten().collect(),
    })
}

/// One worker's games; returns those still running (with
/// `selfplay.carry_over`, once it has finished its share).
fn worker_loop<E: Evaluator<Game>>(
    job: &SelfPlayJob<E>,
    worker: usize,
    next_game: &AtomicUsize,
    totals: &Mutex<SelfPlayStats>,
) -> Result<Vec<RunningGame>, TrainError> {
    let cfg = job.config;
    let threads = job.threads.max(1);
    let carry = cfg.selfplay.carry_over;
    let mut share = Share::new(carry, job.games, threads, worker);
    // With carry_over: the new games this worker has begun.
    let mut begun = 0;
    let evaluator = &job.evaluators[worker % job.evaluators.len()];
    let base = search_config(cfg);
    let mut opponent = opponent_agent(job, worker)?;
    let opponent_sides = cfg.selfplay.opponent_side()?;
    let mut searches: Vec<Search<Game>> = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
    let mut lockstep = Lockstep::new();
    let mut sink = GameSink {
        shard: ShardBuffer {
            write_shard: job.write_shard,
            thread: worker,
            per_shard: cfg.selfplay.samples_per_shard,
            samples: Vec::new(),
            games: 0,
            part: 0,
        },
        prover: TargetProver::new(cfg.selfplay.prove_targets, job.variant),
        totals,
    };
    // Carried games go on first, in the order they were left; each move's
    // search starts afresh under this generation's network.
    for carried in job.carried.iter().filter(|g| g.worker % threads == worker) {
        let mut slot = Slot {
            carried: true,
            first_ply: carried.game.ply(),
            ..carried.slot.clone()
        };
        let seed = halatafl_arena::derive_seed(job.seed, slot.seed);
        let mut search = Search::new(carried.game.clone(), base.clone(), seed);
        start_network_move(cfg, &mut slot, &mut search);
        searches.push(search);
        slots.push(slot);
    }
    loop {
        // Fill free slots with new games.
        while slots.len() < cfg.selfplay.concurrent_games && !share.done() {
            let index = if carry {
                begun += 1;
                worker + (begun - 1) * threads
            } else {
                next_game.fetch_add(1, Ordering::SeqCst)
            };
            if !carry && index >= job.games {
                break;
            }
            let game_seed = job.seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut rng = ChaCha8Rng::seed_from_u64(game_seed);
            let play_out = rng.random_bool(cfg.selfplay.resign_playout_fraction);
            // Drawn only when asked for, so runs without it replay exactly.
            let from_suite = cfg.selfplay.start_suite_fraction;
            let suite_drawn =
                from_suite > 0.0 && !job.suite_starts.is_empty() && rng.random_bool(from_suite);
            let fraction = cfg.selfplay.start_position_fraction;
            let drawn = suite_drawn
                || fraction > 0.0 && !job.starts.is_empty() && rng.random_bool(fraction);
            let game = if suite_drawn {
                Game::new(job.suite_starts[rng.random_range(0..job.suite_starts.len())])
            } else if drawn {
                Game::new(job.starts[rng.random_range(0..job.starts.len())])
            } else {
                Game::start_of(job.variant)
            };
            // Drawn only when asked for, as above.
            let opponent_side = match &opponent {
                Some(_) if rng.random_bool(cfg.selfplay.opponent_fraction) => {
                    Some(opponent_sides.draw(|| rng.random_bool(0.5)))
                }
                _ => None,
            };
            let mut search = Search::new(game, base.clone(), game_seed);
            let mut slot = Slot {
                index,
                seed: game_seed,
                rng,
                full: false,
                pending: Vec::new(),
                low: [0, 0],
                play_out,
                would_resign: None,
                drawn,
                opponent: opponent_side,
                carried: false,
                first_ply: 0,
            };
            // The opponent may have the first move.
            if let Some((winner, reason)) =
                opponent_reply(&mut search, &mut slot, &mut opponent, cfg, job.generation)?
            {
                share.count(&mut slot);
                finish(job, slot, &search, winner, reason, &mut sink)?;
                continue;
            }
            start_network_move(cfg, &mut slot, &mut search);
            searches.push(search);
            slots.push(slot);
        }
        if slots.is_empty() || share.done() {
            break;
        }
        // One round of leaves from every unfinished search; searches whose
        // move is done play it and start the next at once, so the network
        // batch stays full instead of draining while slow searches finish.
        lockstep.step(&mut searches, evaluator);
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
                let v: Wdl = result.value;
                slot.record(game, result.policy.clone(), [v.win, v.draw, v.loss]);
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
                ended = game_end(search.game(), cfg);
                if ended.is_none() {
                    ended = opponent_reply(search, slot, &mut opponent, cfg, job.generation)?;
                }
            }
            match ended {
                Some((winner, reason)) => {
                    let mut slot = slots.swap_remove(i);
                    let search = searches.swap_remove(i);
                    share.count(&mut slot);
                    finish(job, slot, &search, winner, reason, &mut sink)?;
                    if share.done() {
                        break;
                    }
                }
                None => {
                    start_network_move(cfg, &mut slots[i], &mut searches[i]);
                    i += 1;
                }
            }
        }
    }
    sink.shard.flush()?;
    let left: usize = slots
        .iter()
        .zip(&searches)
        .map(|(slot, search)| search.game().ply() - slot.first_ply)
        .sum();
    totals.lock().expect("totals lock").plies_played += left;
    // Without carry_over every slot has emptied. A game whose move was
    // being searched is left before that move: its next generation
    // searches it again.
    Ok(slots
        .into_iter()
        .zip(searches)
        .map(|(slot, search)| RunningGame {
            worker,
            game: search.game().clone(),
            slot,
        })
        .collect())
}

/// A worker's samples not yet stored as a shard.
struct ShardBuffer<'a> {
    write_shard: &'a (dyn Fn(ShardPiece) -> Result<(), TrainError> + Sync),
    thread: usize,
    /// `selfplay.samples_per_shard`.
    per_shard: usize,
    samples: Vec<StoredSample>,
    /// The games the samples come from ...
    games: usize,
    /// ... and the number of the shard they will be (0-based).
    part: usize,
}

impl ShardBuffer<'_> {
    /// Adds a finished game's samples; stores them once there are enough
    /// for a shard.
    fn add_game(
        &mut self,
        samples: impl IntoIterator<Item = StoredSample>,
    ) -> Result<(), TrainError> {
        self.samples.extend(samples);
        self.games += 1;
        if self.samples.len() >= self.per_shard {
            self.flush()?;
        }
        Ok(())
    }

    /// Stores what there is as a shard (nothing when empty).
    fn flush(&mut self) -> Result<(), TrainError> {
        if self.samples.is_empty() {
            return Ok(());
        }
        (self.write_shard)(ShardPiece {
            thread: self.thread,
            part: self.part,
            samples: &self.samples,
            games: self.games,
        })?;
        self.samples.clear();
        self.games = 0;
        self.part += 1;
        Ok(())
    }
}

/// How the game ended after a move, if it did: by the rules, or cut at
/// `selfplay.max_plies`.
fn game_end(game: &Game, cfg: &RunConfig) -> Option<(Option<Side>, String)> {
    if let Some(Outcome { winner, reason }) = game.outcome() {
        Some((winner, reason.name().to_string()))
    } else if game.ply() >= cfg.selfplay.max_plies {
        Some((None, "max-plies".to_string()))
    } else {
        None
    }
}

/// The worker's copy of `selfplay.opponent`, when games are played against it.
fn opponent_agent<E: Evaluator<Game>>(
    job: &SelfPlayJob<E>,
    worker: usize,
) -> Result<Option<Box<dyn Agent>>, TrainError> {
    let cfg = &job.config.selfplay;
    if !cfg.has_opponent() {
        return Ok(None);
    }
    let failed = |why: String| TrainError::Stage {
        generation: job.generation,
        why: format!("selfplay.opponent {:?}: {why}", cfg.opponent),
    };
    let factory = job
        .agents
        .ok_or_else(|| failed("this self-play stage was given no way to build agents".into()))?;
    let seed = job.seed ^ (worker as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut agent = factory(&cfg.opponent, seed).map_err(|e| failed(e.to_string()))?;
    agent.new_game(seed);
    Ok(Some(agent))
}

/// Plays the fixed opponent's move if the game is its to move, recording
/// its position as a sample where `selfplay.opponent_samples` asks; returns
/// how the game ended, if that move ended it.
fn opponent_reply(
    search: &mut Search<Game>,
    slot: &mut Slot,
    agent: &mut Option<Box<dyn Agent>>,
    cfg: &RunConfig,
    generation: u32,
) -> Result<Option<(Option<Side>, String)>, TrainError> {
    let (Some(side), Some(agent)) = (slot.opponent, agent.as_mut()) else {
        return Ok(None);
    };
    // Callers pass running games only.
    if search.game().position().side() != side {
        return Ok(None);
    }
    let mv = agent.choose(search.game(), &Budget::default()).mv;
    if !search.game().position().legal_moves().contains(&mv) {
        return Err(TrainError::Stage {
            generation,
            why: format!(
                "selfplay.opponent {:?} answered an illegal move in {}",
                cfg.selfplay.opponent,
                search.game().position()
            ),
        });
    }
    if cfg.selfplay.opponent_samples && slot.rng.random_bool(cfg.search.full_search_probability) {
        let game = search.game();
        let policy = game
            .position()
            .legal_moves()
            .iter()
            .map(|&m| (m == mv) as u8 as f32)
            .collect();
        // No search value: `finish` gives these samples their result target
        // in its place (they are the positions of the opponent's side).
        slot.record(game, policy, [0.0, 1.0, 0.0]);
    }
    search.play(mv);
    Ok(game_end(search.game(), cfg))
}

/// Starts the network's search for its next move: a full search (whose
/// position becomes a sample) with probability `search.full_search_probability`.
fn start_network_move(cfg: &RunConfig, slot: &mut Slot, search: &mut Search<Game>) {
    slot.full = slot.rng.random_bool(cfg.search.full_search_probability);
    search.set_noise(slot.full);
    search.start_move(if slot.full {
        cfg.search.simulations
    } else {
        cfg.search.fast_simulations
    });
}

/// Where a worker's finished games go.
struct GameSink<'a> {
    /// Their samples, until there are enough for a shard.
    shard: ShardBuffer<'a>,
    /// With `selfplay.prove_targets`: the proof search that settles their
    /// targets, one table kept across the worker's games.
    prover: Option<TargetProver>,
    /// Every worker's finished games' totals.
    totals: &'a Mutex<SelfPlayStats>,
}

/// A finished game: its samples get their targets (proven ones where the
/// sink's prover settles them) and go to its shard, and its totals and
/// progress are reported.
fn finish<E: Evaluator<Game>>(
    job: &SelfPlayJob<E>,
    slot: Slot,
    search: &Search<Game>,
    winner: Option<Side>,
    reason: String,
    sink: &mut GameSink,
) -> Result<(), TrainError> {
    let plies = search.game().ply();
    let samples = slot.pending.len();
    let half_life = job.config.selfplay.result_half_life;
    let ended_by_rules = !matches!(reason.as_str(), "resigned" | "max-plies");
    let resigned = reason == "resigned";
    let geese_at_end = search.game().position().geese().count();
    let proven = match &mut sink.prover {
        Some(prover) => prover.prove_game(
            slot.pending.iter().map(|(sample, ..)| sample),
            job.config.selfplay.prove_policy,
        ),
        None => vec![None; samples],
    };
    let opponent_side = slot.opponent;
    let finished = FinishedGame {
        index: slot.index,
        result: winner.map_or("draw", Side::name),
        reason,
        plies,
        samples,
        false_resign: slot.would_resign.map(|s| winner != Some(s.other())),
        drawn_start: slot.drawn,
        opponent: slot.opponent,
        moves: search.game().moves_text(),
        start: slot.drawn.then(|| search.game().start_position().fen()),
        carried: slot.carried,
        plies_here: plies - slot.first_ply,
        proven_samples: proven.iter().flatten().count(),
        proven_policies: proven
            .iter()
            .flatten()
            .filter(|p| p.policy.is_some())
            .count(),
    };
    sink.shard
        .add_game(slot.pending.into_iter().zip(proven).map(
            |((mut sample, search_wdl, side, ply), proven)| {
                let to_end = (plies as u32).saturating_sub(ply);
                let proven_wdl = proven.as_ref().map(|p| p.wdl);
                sample.wdl = proven_wdl
                    .unwrap_or_else(|| discounted_wdl_for(winner, side, to_end, half_life));
                // The replay mixes the search value in: a proven value
                // replaces it too, so the target is exact whatever the mix.
                // The opponent's positions (`selfplay.opponent_samples`) had
                // no search of the network's: their target stands in.
                let search_wdl = match proven_wdl {
                    Some(wdl) => wdl,
                    None if Some(side) == opponent_side => sample.wdl,
                    None => search_wdl,
                };
                if let Some(policy) = proven.and_then(|p| p.policy) {
                    sample.policy = policy;
                }
                let taken = sample.position.geese().count().saturating_sub(geese_at_end);
                sample.aux = AuxTarget::labels(GameEnd {
                    plies_to_end: to_end,
                    ended_by_rules,
                    geese_taken_to_end: (!resigned).then_some(taken),
                });
                StoredSample { sample, search_wdl }
            },
        ))?;
    sink.totals.lock().expect("totals lock").add(&finished);
    (job.on_game)(&finished);
    Ok(())
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
        play_against(config, starts, games, None).unwrap()
    }

    /// [`play_recording`] with a way to build `selfplay.opponent`.
    fn play_against(
        config: &RunConfig,
        starts: &[Position],
        games: usize,
        agents: Option<&BaseFactory>,
    ) -> Result<(SelfPlayStats, Vec<StoredSample>, Vec<FinishedGame>), TrainError> {
        play_in(config, Variant::two_foxes(), (starts, &[]), games, agents)
    }

    /// [`play_against`] in games of `variant`, with `starts` and
    /// `suite_starts` to begin games at.
    fn play_in(
        config: &RunConfig,
        variant: Variant,
        (starts, suite_starts): (&[Position], &[Position]),
        games: usize,
        agents: Option<&BaseFactory>,
    ) -> Result<(SelfPlayStats, Vec<StoredSample>, Vec<FinishedGame>), TrainError> {
        let finished = Mutex::new(Vec::new());
        let samples = Mutex::new(Vec::new());
        let write = |piece: ShardPiece| -> Result<(), TrainError> {
            samples.lock().unwrap().extend_from_slice(piece.samples);
            Ok(())
        };
        let job = SelfPlayJob {
            config,
            threads: 1,
            variant,
            evaluators: &[UniformEvaluator],
            generation: 1,
            seed: 7,
            games,
            starts,
            suite_starts,
            write_shard: &write,
            on_game: &|g: &FinishedGame| finished.lock().unwrap().push(g.clone()),
            agents,
            carried: &[],
        };
        let stats = run_generation(&job)?.stats;
        Ok((
            stats,
            samples.into_inner().unwrap(),
            finished.into_inner().unwrap(),
        ))
    }

    fn random_agents(_spec: &str, seed: u64) -> Result<Box<dyn Agent>, halatafl_agent::SpecError> {
        Ok(Box::new(halatafl_agent::RandomAgent::new(seed)))
    }

    /// `short_games` long enough for some games to end by the rules, half of
    /// them or all against a random opponent playing `side`.
    fn against_random(side: &str, fraction: f64) -> RunConfig {
        let mut config = short_games();
        config.selfplay.max_plies = 300;
        config.selfplay.opponent = "random".into();
        config.selfplay.opponent_fraction = fraction;
        config.selfplay.opponent_side = side.into();
        config.validate().unwrap();
        config
    }

    /// Each game's samples (one worker stores them together, in the order
    /// the games finished), with the game; they must account for every sample.
    fn by_game<'a>(
        samples: &'a [StoredSample],
        finished: &'a [FinishedGame],
    ) -> Vec<(&'a FinishedGame, &'a [StoredSample])> {
        let mut at = 0;
        let games = finished
            .iter()
            .map(|g| {
                at += g.samples;
                (g, &samples[at - g.samples..at])
            })
            .collect();
        assert_eq!(at, samples.len());
        games
    }

    #[test]
    fn games_against_the_opponent_sample_only_the_networks_moves() {
        for (side, network) in [("geese", Side::Foxes), ("foxes", Side::Geese)] {
            let config = against_random(side, 1.0);
            let (stats, samples, finished) =
                play_against(&config, &[], 6, Some(&random_agents)).unwrap();
            assert_eq!((stats.opponent_games, stats.games), (6, 6));
            let mut not_lost = 0;
            for (g, game) in by_game(&samples, &finished) {
                assert_eq!(g.opponent, Some(network.other()));
                // The foxes move at even plies: one sample per network move.
                let network_moves = match network {
                    Side::Foxes => g.plies.div_ceil(2),
                    Side::Geese => g.plies / 2,
                };
                assert_eq!(
                    g.samples, network_moves,
                    "game {}: {} plies",
                    g.index, g.plies
                );
                let winner = [Side::Foxes, Side::Geese]
                    .into_iter()
                    .find(|s| s.name() == g.result);
                not_lost += (winner != Some(network.other())) as usize;
                for s in game {
                    assert_eq!(s.sample.position.side(), network);
                    assert_eq!(s.sample.wdl, wdl_for(winner, network));
                }
            }
            assert_eq!(stats.opponent_not_lost, not_lost);
            assert!(
                finished.iter().any(|g| g.reason != "max-plies"),
                "no game ended by the rules"
            );
        }

        // Either side, for part of the games: the others stay self-play.
        let config = against_random("either", 0.5);
        let (stats, samples, finished) =
            play_against(&config, &[], 40, Some(&random_agents)).unwrap();
        assert!(
            (8..=32).contains(&stats.opponent_games),
            "{}",
            stats.opponent_games
        );
        let sides: Vec<Option<Side>> = finished.iter().map(|g| g.opponent).collect();
        assert!(sides.contains(&Some(Side::Foxes)) && sides.contains(&Some(Side::Geese)));
        for (g, _) in by_game(&samples, &finished) {
            if g.opponent.is_none() {
                assert_eq!(g.samples, g.plies, "self-play samples every move");
            }
        }

        // At fraction 0 the stream of games is the one a run without an
        // opponent plays, factory or not.
        let mut off = against_random("geese", 0.0);
        off.selfplay.max_plies = 40;
        let (_, with_factory, _) = play_against(&off, &[], 6, Some(&random_agents)).unwrap();
        let mut plain = short_games();
        plain.selfplay.max_plies = 40;
        let (_, without, _) = play_recording(&plain, &[], 6);
        assert_eq!(with_factory, without);
    }

    #[test]
    fn the_opponents_samples_teach_its_moves_and_its_result() {
        for (side, teacher) in [("geese", Side::Geese), ("foxes", Side::Foxes)] {
            let mut config = against_random(side, 1.0);
            config.selfplay.opponent_samples = true;
            config.validate().unwrap();
            let (stats, samples, finished) =
                play_against(&config, &[], 6, Some(&random_agents)).unwrap();
            assert_eq!(stats.opponent_games, 6);
            let mut taught = 0;
            for (g, game) in by_game(&samples, &finished) {
                // Every full search of the network's and, at the same rate
                // (here 1), every position the opponent moves in.
                assert_eq!(g.samples, g.plies, "game {}", g.index);
                let winner = [Side::Foxes, Side::Geese]
                    .into_iter()
                    .find(|s| s.name() == g.result);
                let mut replay = Game::start_of(Variant::two_foxes());
                for (s, mv) in game.iter().zip(g.moves.split_whitespace()) {
                    assert_eq!(&s.sample.position, replay.position());
                    let played = replay.play_str(mv).unwrap();
                    let side = s.sample.position.side();
                    assert_eq!(s.sample.wdl, wdl_for(winner, side));
                    if side != teacher {
                        continue;
                    }
                    // The opponent's move is the whole policy target, and
                    // its result stands in for the search value.
                    taught += 1;
                    let moves = s.sample.position.legal_moves();
                    let at = moves.iter().position(|&m| m == played).unwrap();
                    for (k, p) in s.sample.policy.iter().enumerate() {
                        assert_eq!(*p, (k == at) as u8 as f32, "game {}", g.index);
                    }
                    assert_eq!(s.search_wdl, s.sample.wdl);
                }
            }
            assert!(taught > 0);
        }

        // At half the full searches, about half the opponent's positions.
        let mut config = against_random("geese", 1.0);
        config.selfplay.opponent_samples = true;
        config.search.full_search_probability = 0.5;
        let (_, samples, finished) = play_against(&config, &[], 8, Some(&random_agents)).unwrap();
        let geese_moves: usize = finished.iter().map(|g| g.plies / 2).sum();
        let taught = samples
            .iter()
            .filter(|s| s.sample.position.side() == Side::Geese)
            .count();
        assert!(
            taught > geese_moves / 4 && taught < geese_moves * 3 / 4,
            "{taught} of {geese_moves}"
        );

        // Without an opponent to learn from, the key is refused.
        let mut alone = short_games();
        alone.selfplay.opponent_samples = true;
        let err = alone.validate().unwrap_err().to_string();
        assert!(err.contains("selfplay.opponent_samples"), "{err}");
    }

    /// Answers every position with the start's first move, which is the foxes'.
    struct Stubborn;

    impl Agent for Stubborn {
        fn spec(&self) -> String {
            "stubborn".into()
        }
        fn choose(&mut self, _game: &Game, _budget: &Budget) -> halatafl_agent::Decision {
            let start = Game::start_of(Variant::two_foxes());
            halatafl_agent::Decision::just(start.position().legal_moves()[0])
        }
        fn new_game(&mut self, _seed: u64) {}
    }

    #[test]
    fn an_opponent_that_cannot_be_built_or_plays_an_illegal_move_stops_the_stage() {
        let config = against_random("geese", 1.0);
        let err = play_against(&config, &[], 2, None).unwrap_err().to_string();
        assert!(
            err.contains("selfplay.opponent \"random\"") && err.contains("no way to build agents"),
            "{err}"
        );
        let stubborn = |_: &str, _: u64| -> Result<Box<dyn Agent>, halatafl_agent::SpecError> {
            Ok(Box::new(Stubborn))
        };
        let err = play_against(&config, &[], 2, Some(&stubborn))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "generation 1: selfplay.opponent \"random\" answered an illegal move in"
            ),
            "{err}"
        );
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
    fn suite_starts_are_drawn_first_and_apart_from_the_other_starts() {
        let two_foxes = Variant::two_foxes();
        // Foxes to move with nine geese and a compulsory jump: a game from
        // here ends at its first move (as in the test above).
        let suite =
            Position::from_fen("F../.../...F.../...G.../GGG.GG./GGG/... f 0", two_foxes).unwrap();
        let earlier =
            Position::from_fen("F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 3", two_foxes).unwrap();
        let mut config = short_games();
        config.selfplay.start_suite_fraction = 0.5;
        config.selfplay.start_position_fraction = 1.0;
        let (stats, samples, games) =
            play_in(&config, two_foxes, (&[earlier], &[suite]), 40, None).unwrap();
        let from_suite = games.iter().filter(|g| g.plies == 1).count();
        assert!(
            (8..=32).contains(&from_suite),
            "about half of 40 games begin at the suite's position: {from_suite}"
        );
        // Every other game begins at the other start (fraction 1): none at
        // the variant's start.
        assert_eq!(stats.drawn_starts, 40);
        let starts = samples.iter().filter(|s| s.sample.position == earlier);
        assert_eq!(starts.count(), 40 - from_suite);
        assert!(samples
            .iter()
            .all(|s| s.sample.position != *Game::start_of(two_foxes).position()));

        // Without suite positions the stream of games is the one a run
        // without the option plays.
        config.selfplay.start_suite_fraction = 0.0;
        let (_, plain, _) = play_in(&config, two_foxes, (&[earlier], &[suite]), 10, None).unwrap();
        let (_, without, _) = play_in(&config, two_foxes, (&[earlier], &[]), 10, None).unwrap();
        assert_eq!(plain, without);
    }

    #[test]
    fn proven_targets_replace_the_value_with_the_exact_one() {
        let classic: Variant = "classic geese=13".parse().unwrap();
        // A late classic game with the fox to move: uniform searches finish
        // it in a few dozen plies, and its positions are proven in a few
        // thousand nodes.
        let late =
            Position::from_fen("GF./.GG/GGGGGGG/..G.GG./......./.../... f 1", classic).unwrap();
        let mut config = short_games();
        config.game.variant = "classic geese=13".into();
        config.selfplay.max_plies = 300;
        config.selfplay.start_position_fraction = 1.0;
        let (plain_stats, plain) = {
            let (stats, samples, _) = play_in(&config, classic, (&[late], &[]), 6, None).unwrap();
            (stats, samples)
        };
        assert_eq!(plain_stats.proven_samples, 0);
        config.selfplay.prove_targets = 100_000;
        config.validate().unwrap();
        let (stats, proven, games) = play_in(&config, classic, (&[late], &[]), 6, None).unwrap();
        // The same games: proving changes the targets, not the play.
        assert_eq!(stats.samples, plain_stats.samples);
        assert_eq!(
            stats.proven_samples, stats.samples,
            "every late position is settled"
        );
        assert_eq!(
            games.iter().map(|g| g.proven_samples).sum::<usize>(),
            stats.samples
        );
        let mut exact = halatafl_solver::DagSolver::new(halatafl_solver::DagConfig {
            budget_nodes: 10_000_000,
            tt_mib: 16,
        })
        .unwrap();
        let mut corrected = 0;
        for (p, s) in proven.iter().zip(&plain) {
            assert_eq!(p.sample.position, s.sample.position);
            let position = &p.sample.position;
            let winner = exact.solve(position).unwrap().winner;
            let want = if winner == Some(position.side()) {
                [1.0, 0.0, 0.0]
            } else {
                [0.0, 0.0, 1.0]
            };
            assert_eq!(p.sample.wdl, want, "{}", position.fen());
            assert_eq!(p.search_wdl, want, "the search value is replaced too");
            // The plain target is the game's result.
            corrected += (s.sample.wdl != want) as usize;
        }
        // Uniform play throws won positions away: some results were wrong.
        assert!(corrected > 0, "no result differed from the exact value");

        // With prove_policy, a won sample's policy is on winning moves only.
        config.selfplay.prove_policy = true;
        config.validate().unwrap();
        let (stats_with_policy, with_policy, _) =
            play_in(&config, classic, (&[late], &[]), 6, None).unwrap();
        let mut moved = 0;
        for (p, s) in with_policy.iter().zip(&proven) {
            assert_eq!(p.sample.wdl, s.sample.wdl);
            if p.sample.wdl[0] != 1.0 {
                assert_eq!(p.sample.policy, s.sample.policy, "only won samples change");
                continue;
            }
            let position = &p.sample.position;
            let total: f32 = p.sample.policy.iter().sum();
            assert!((total - 1.0).abs() < 1e-5, "{total}");
            for (&mv, &mass) in position.legal_moves().iter().zip(&p.sample.policy) {
                let after = position.play(mv).unwrap();
                let keeps = exact.solve(&after).unwrap().winner == Some(position.side());
                assert!(mass == 0.0 || keeps, "{mv} loses in {}", position.fen());
            }
            moved += (p.sample.policy != s.sample.policy) as usize;
        }
        assert!(
            moved > 0,
            "uniform searches put mass on losing moves somewhere"
        );
        assert_eq!(stats_with_policy.proven_policies, moved);
    }

    #[test]
    fn geese_taken_counts_the_captures_from_each_sample_to_the_end() {
        let taken = |s: &StoredSample| s.sample.aux[AuxTarget::GeeseTaken];
        // Uniform searches: the foxes take geese in most games, some games
        // are cut at max_plies (labelled all the same), none resigns.
        let mut config = short_games();
        config.selfplay.max_plies = 120;
        config.selfplay.concurrent_games = 2;
        let (_, samples, finished) = play_recording(&config, &[], 4);
        let mut captures = 0;
        for (g, game) in by_game(&samples, &finished) {
            // Replay the game to its last position: the labels count down to
            // what the last position lacks.
            let mut replay = Game::start_of(Variant::two_foxes());
            for mv in g.moves.split_whitespace() {
                replay.play_str(mv).unwrap();
            }
            let at_end = replay.position().geese().count();
            for s in game {
                let want = s.sample.position.geese().count() - at_end;
                assert_eq!(taken(s), Some(want as f32), "game {}", g.index);
            }
            captures += game.first().map_or(0, |s| taken(s).unwrap() as u32);
        }
        assert!(captures > 0, "no game had a capture: {finished:?}");
    }

    #[test]
    fn plies_left_count_down_to_one_at_the_end_of_games_the_rules_ended() {
        let plies_left = |s: &StoredSample| s.sample.aux[AuxTarget::MovesLeft];
        // Long enough for games to end by the rules; every position is a sample.
        let mut config = short_games();
        config.selfplay.max_plies = 300;
        config.selfplay.concurrent_games = 2;
        let (_, samples, finished) = play_recording(&config, &[], 3);
        // One worker: each game's samples are stored together, in the order
        // the games finished, from the game's first position to its last
        // (`by_game` checks that they account for every sample).
        let mut by_rules = 0;
        for (g, game) in by_game(&samples, &finished) {
            assert_eq!(g.samples, g.plies, "every position is a sample");
            let plies: Vec<Option<f32>> = game.iter().map(plies_left).collect();
            if g.reason == "max-plies" {
                assert!(plies.iter().all(Option::is_none), "{plies:?}");
            } else {
                by_rules += 1;
                let want: Vec<Option<f32>> = (1..=g.plies).rev().map(|p| Some(p as f32)).collect();
                assert_eq!(plies, want, "game {} ended by {}", g.index, g.reason);
            }
        }
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
        assert!(samples.iter().all(|s| plies_left(s) == Some(1.0)));
        let (_, samples, finished) = play_recording(&short_games(), &[], 2);
        assert!(finished.iter().all(|g| g.reason == "max-plies"));
        assert!(samples.iter().all(|s| plies_left(s).is_none()));
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

    /// A uniform evaluator that records the threads that called it.
    #[derive(Default)]
    struct CountingEvaluator {
        callers: Mutex<std::collections::HashSet<std::thread::ThreadId>>,
        calls: std::sync::atomic::AtomicUsize,
    }

    impl Evaluator<Game> for CountingEvaluator {
        fn evaluate(
            &self,
            batch: &halatafl_mcts::LeafBatch<Game>,
            out: &mut halatafl_mcts::Evaluations,
        ) {
            self.callers
                .lock()
                .unwrap()
                .insert(std::thread::current().id());
            self.calls.fetch_add(1, Ordering::SeqCst);
            // As slow as a network call, so that no worker plays every game
            // before the others have started.
            std::thread::sleep(std::time::Duration::from_millis(1));
            UniformEvaluator.evaluate(batch, out);
        }
    }

    #[test]
    fn each_worker_calls_its_own_evaluator() {
        let config = short_games();
        let servers = [CountingEvaluator::default(), CountingEvaluator::default()];
        let write = |_: ShardPiece| -> Result<(), TrainError> { Ok(()) };
        let job = SelfPlayJob {
            config: &config,
            threads: 2,
            variant: Variant::two_foxes(),
            evaluators: &servers,
            generation: 1,
            seed: 7,
            games: 16,
            starts: &[],
            suite_starts: &[],
            write_shard: &write,
            on_game: &|_: &FinishedGame| {},
            agents: None,
            carried: &[],
        };
        let stats = run_generation(&job).unwrap().stats;
        assert_eq!(stats.games, 16);
        for server in &servers {
            // Both workers took games (4 at a time, 16 in all), and each
            // spoke to one evaluator only.
            assert!(server.calls.load(Ordering::SeqCst) > 0);
            assert_eq!(server.callers.lock().unwrap().len(), 1);
        }
        let a = servers[0].callers.lock().unwrap();
        let b = servers[1].callers.lock().unwrap();
        assert!(a.is_disjoint(&b));
        // Three workers on two evaluators: the third shares the first's.
        let shared = [CountingEvaluator::default(), CountingEvaluator::default()];
        let job = SelfPlayJob {
            threads: 3,
            games: 24,
            evaluators: &shared,
            ..job
        };
        assert_eq!(run_generation(&job).unwrap().stats.games, 24);
        assert_eq!(shared[1].callers.lock().unwrap().len(), 1);
        assert!(shared[0].callers.lock().unwrap().len() <= 2);
    }

    /// A uniform evaluator that records how many positions each call held.
    #[derive(Default)]
    struct BatchSizes(Mutex<Vec<usize>>);

    impl Evaluator<Game> for BatchSizes {
        fn evaluate(
            &self,
            batch: &halatafl_mcts::LeafBatch<Game>,
            out: &mut halatafl_mcts::Evaluations,
        ) {
            self.0.lock().unwrap().push(batch.len());
            UniformEvaluator.evaluate(batch, out);
        }
    }

    /// One generation of `games` on one worker, continuing `carried`: its
    /// result, samples, finished games and each call's positions.
    fn generation(
        config: &RunConfig,
        games: usize,
        seed: u64,
        carried: &[RunningGame],
    ) -> (Played, Vec<StoredSample>, Vec<FinishedGame>, Vec<usize>) {
        let finished = Mutex::new(Vec::new());
        let samples = Mutex::new(Vec::new());
        let write = |piece: ShardPiece| -> Result<(), TrainError> {
            samples.lock().unwrap().extend_from_slice(piece.samples);
            Ok(())
        };
        let sizes = [BatchSizes::default()];
        let job = SelfPlayJob {
            config,
            threads: 1,
            variant: Variant::two_foxes(),
            evaluators: &sizes,
            generation: 2,
            seed,
            games,
            starts: &[],
            suite_starts: &[],
            write_shard: &write,
            on_game: &|g: &FinishedGame| finished.lock().unwrap().push(g.clone()),
            agents: None,
            carried,
        };
        let played = run_generation(&job).unwrap();
        let [sizes] = sizes;
        (
            played,
            samples.into_inner().unwrap(),
            finished.into_inner().unwrap(),
            sizes.0.into_inner().unwrap(),
        )
    }

    #[test]
    fn carried_games_keep_the_calls_full_and_finish_in_the_next_generation() {
        let mut config = short_games();
        config.selfplay.max_plies = 40;
        config.selfplay.carry_over = true;
        let slots = config.selfplay.concurrent_games;
        let (first, first_samples, first_games, sizes) = generation(&config, 6, 7, &[]);
        assert_eq!(first.stats.games, 6);
        assert_eq!(first.stats.carried_in, 0);
        // The slots are refilled until the worker has its six games (the
        // last one's slot stays empty), so the calls stay full: a search
        // sits a round out only when its leaf needs no network.
        assert!(
            (1..slots).contains(&first.running.len()),
            "{}",
            first.running.len()
        );
        let mean = |sizes: &[usize]| sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
        assert!(sizes.iter().all(|&n| n + 1 >= slots), "{sizes:?}");
        assert!(mean(&sizes) > 0.9 * slots as f64, "{sizes:?}");
        let mut numbers: Vec<usize> = first_games.iter().map(|g| g.index).collect();
        numbers.sort();
        assert_eq!(numbers, (0..6).collect::<Vec<_>>());
        assert_eq!(first_samples.len(), first.stats.samples);
        // Each ply counts where it was played: the running games' so far.
        let running_plies = |p: &Played| p.running.iter().map(RunningGame::plies).sum::<usize>();
        assert_eq!(
            first.stats.plies_played,
            first.stats.plies + running_plies(&first)
        );

        // Without it the same games end one by one and the calls shrink.
        let mut plain = config.clone();
        plain.selfplay.carry_over = false;
        let (alone, _, _, plain_sizes) = generation(&plain, 6, 7, &[]);
        assert!(alone.running.is_empty());
        assert!(plain_sizes.contains(&1), "{plain_sizes:?}");
        assert!(mean(&plain_sizes) < mean(&sizes), "{plain_sizes:?}");

        // In the next generation the carried games go on from where they
        // stopped, with a sample for each of their positions, old and new.
        let carried: Vec<(String, usize)> = first
            .running
            .iter()
            .map(|g| (g.game.moves_text(), g.slot.pending.len()))
            .collect();
        let (second, samples, games, _) = generation(&config, 6, 8, &first.running);
        assert_eq!(second.stats.games, 6);
        assert_eq!(second.stats.carried_in, carried.len());
        assert_eq!(
            second.stats.plies_played,
            second.stats.plies + running_plies(&second) - running_plies(&first)
        );
        for (g, game_samples) in by_game(&samples, &games) {
            assert_eq!(g.samples, g.plies, "every position is a sample");
            assert_eq!(game_samples.len(), g.plies);
            if g.carried {
                assert!(
                    carried
                        .iter()
                        .any(|(moves, n)| g.moves.starts_with(moves.as_str()) && *n < g.plies),
                    "game {} does not go on from a carried one",
                    g.index
                );
            }
        }

        // Saved and read back, the carried games play the same generation.
        let dir = std::env::temp_dir().join(format!("halatafl-carry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(crate::running::RUNNING_FILE);
        crate::running::write_running(&path, 1, Variant::two_foxes(), &first.running).unwrap();
        let read = crate::running::read_running(&path, 1, Variant::two_foxes()).unwrap();
        let (again, again_samples, again_games, _) = generation(&config, 6, 8, &read);
        assert_eq!(again_samples, samples);
        assert_eq!(again_games, games);
        let untimed = |s: &SelfPlayStats| SelfPlayStats {
            seconds: 0.0,
            ..s.clone()
        };
        assert_eq!(untimed(&again.stats), untimed(&second.stats));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn shares_of_a_generation_cover_its_games_once() {
        for (games, threads) in [(96, 2), (7, 3), (5, 5), (1, 1)] {
            let mut next = 0;
            for w in 0..threads {
                let Share {
                    size: share, first, ..
                } = Share::new(true, games, threads, w);
                assert_eq!(first, next, "{games} games on {threads}");
                assert!(share == games / threads || share == games / threads + 1);
                next += share;
            }
            assert_eq!(next, games);
        }
    }
}
