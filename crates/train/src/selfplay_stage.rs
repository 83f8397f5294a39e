//! Self-play as a stage: generation 0's expert games ([`Run::bootstrap_stage`]),
//! a generation's games in turn ([`Run::selfplay_stage`], `halatafl train`),
//! and the asynchronous worker ([`Run::run_selfplay_worker`], `halatafl
//! selfplay --run DIR --worker ID`).
//!
//! A worker plays `async.shard_games` games at a time with the newest
//! checkpoint g it finds and writes them as one shard,
//! `shards/gen_{g+1}/w<ID>-<seq>.shard` (samples of generation g+1 are made
//! by checkpoint g, as in `halatafl train`); the header records the worker,
//! the checkpoint and the games' statistics ([`crate::shard::ShardOrigin`]),
//! from which the learner writes `selfplay.csv`: workers write no CSV, so any
//! number of them can share a run. `seq` continues after the worker's files
//! in that folder, so a restarted worker adds files and never replaces one.
//! A shard is written to a hidden temporary name and renamed; games in
//! progress when the worker is killed are lost, nothing else. Between
//! batches the worker looks for a newer checkpoint, and it stops once the
//! last generation's checkpoint exists (or `finished.json`).
//!
//! With `selfplay.carry_over` a worker's games still running when a batch
//! has its `async.shard_games` go on in its next batch (under the newest
//! checkpoint then), so its network calls stay full; they live in the
//! worker's memory only, and `halatafl train` keeps them in
//! `shards/gen_NNNN/running.json` (see [`crate::running`]).

use crate::config::SelfPlaySection;
use crate::error::{at, TrainError};
use crate::learn_stage::{selfplay_may_play, SampleCounts};
use crate::run::{bar, BaseFactory, Run, Stage};
use crate::running::{read_running, write_running, RunningGame, RUNNING_FILE};
use crate::selfplay::{run_generation, FinishedGame, SelfPlayJob, SelfPlayStats, ShardPiece};
use crate::shard::{write_shard, ShardHeader, ShardOrigin, StoredSample};
use halatafl_arena::{play_games, GameRow, MatchConfig};
use halatafl_dataio::run_rows::{append_rows, SelfPlayRow};
use halatafl_dataio::SelfPlayGameRow;
use halatafl_nn::checkpoint;
use halatafl_nn::{EvaluatorConfig, EvaluatorStats, NetEvaluator};
use halatafl_rules::{Position, Side};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// The log's note on games begun at drawn positions (none when there were
/// none); `pool` when some may have come from `selfplay.start_suites` or
/// `selfplay.start_books`.
fn drawn_starts_note(stats: &SelfPlayStats, pool: bool) -> String {
    let note = match (stats.drawn_starts, pool) {
        (0, _) => String::new(),
        (n, false) => format!(", {n} begun at positions of earlier games"),
        (n, true) => format!(", {n} begun at positions of suites, books or earlier games"),
    };
    note + &opponent_note(stats, "selfplay.opponent", "the network")
}

/// The log's note on `selfplay.carry_over`: the finished games begun
/// earlier, and the games left running (none without it).
fn carry_note(stats: &SelfPlayStats, running: Option<&[RunningGame]>) -> String {
    let Some(running) = running else {
        return String::new();
    };
    let plies: usize = running.iter().map(RunningGame::plies).sum();
    format!(
        ", {} finished games begun earlier, {} left running (at ply {:.0} on average)",
        stats.carried_in,
        running.len(),
        plies as f64 / running.len().max(1) as f64
    )
}

/// The log's note on `selfplay.prove_targets`: the samples whose value a
/// proof search settled (none without it).
fn proven_note(stats: &SelfPlayStats, selfplay: &SelfPlaySection) -> String {
    let nodes = selfplay.prove_targets;
    if nodes == 0 {
        return String::new();
    }
    let policies = match selfplay.prove_policy {
        true => format!(
            ", {} policies moved onto the winning moves",
            stats.proven_policies
        ),
        false => String::new(),
    };
    format!(
        ", {} of {} samples' values proven ({nodes} nodes each){policies}",
        stats.proven_samples, stats.samples
    )
}

/// The log's note on games against a fixed opponent (`key`), and how many
/// of them `player` won or drew; empty when there were none.
fn opponent_note(stats: &SelfPlayStats, key: &str, player: &str) -> String {
    match stats.opponent_games {
        0 => String::new(),
        n => format!(
            ", {n} against {key} ({player} won or drew {})",
            stats.opponent_not_lost
        ),
    }
}

impl Run {
    /// Generation 0 of a bootstrapped run: the expert plays itself and its
    /// moves become samples (see [`crate::bootstrap`]). The games are also
    /// kept in `bootstrap.csv`, in the arena's columns.
    pub fn bootstrap_stage(&self, base_factory: &BaseFactory) -> Result<SelfPlayStats, TrainError> {
        let cfg = &self.config;
        let b = &cfg.bootstrap;
        let variant = cfg.variant()?;
        let opponent = if b.has_opponent() {
            Some(crate::bootstrap::ExpertOpponent {
                spec: &b.opponent,
                fraction: b.opponent_fraction,
                side: b.opponent_side()?,
            })
        } else {
            None
        };
        let jobs = crate::bootstrap::expert_jobs(
            &b.agent,
            b.games,
            b.opening_plies,
            variant,
            self.stage_seed(0, Stage::SelfPlay),
            opponent,
        )
        .map_err(|e| TrainError::Bootstrap(e.to_string()))?;
        // The jobs carry their openings and seeds; the config gives threads.
        let match_config = MatchConfig {
            threads: Some(self.worker_threads(jobs.len(), "generation 0 expert games")),
            variant,
            ..MatchConfig::default()
        };
        let pb = bar(jobs.len() as u64, "expert");
        pb.set_message(b.agent.clone());
        let started = Instant::now();
        let rows = play_games(&jobs, base_factory, &match_config, &|_r: &GameRow| {
            pb.inc(1)
        })
        .map_err(|e| TrainError::Bootstrap(e.to_string()))?;
        pb.finish_and_clear();
        let seconds = started.elapsed().as_secs_f64();
        let mut stats = SelfPlayStats::default();
        let mut samples = Vec::new();
        for row in &rows {
            let expert = crate::bootstrap::expert_side(row, &b.agent);
            let (outcome, game_samples) = crate::bootstrap::samples_from_game(row, variant, expert)
                .map_err(TrainError::Bootstrap)?;
            stats.add(&FinishedGame {
                index: row.game,
                result: outcome.result_word(),
                reason: outcome.reason.name().to_string(),
                plies: row.plies,
                samples: game_samples.len(),
                false_resign: None,
                drawn_start: false,
                opponent: expert.map(|side| side.other()),
                moves: row.moves.clone(),
                start: None,
                carried: false,
                plies_here: row.plies,
                // The expert's samples are its games' results.
                proven_samples: 0,
                proven_policies: 0,
            });
            samples.extend(game_samples);
        }
        stats.seconds = seconds;
        let dir = self.shard_dir(0);
        std::fs::create_dir_all(&dir).map_err(at(&dir))?;
        let per_shard = cfg.selfplay.samples_per_shard.max(1);
        for (part, chunk) in samples.chunks(per_shard).enumerate() {
            let path = dir.join(format!("expert_{part:04}.shard"));
            write_shard(&path, chunk, 0, 0, None)?;
        }
        halatafl_arena::write_csv_atomic(&self.dir.join("bootstrap.csv"), &rows)?;
        let row = self.selfplay_row(0, &stats, 0.0, 0.0);
        append_rows(&self.dir.join("selfplay.csv"), vec![row.clone()])?;
        let against = opponent_note(
            &stats,
            &format!("bootstrap.opponent {:?}", b.opponent),
            "the expert",
        );
        self.log(&format!(
            "generation 0 expert games ({}): {} games ({} foxes / {} geese / {} draws), {} samples, {:.1} plies/game, {:.2} games/s{against}",
            b.agent, row.games, row.foxes_wins, row.geese_wins, row.draws, row.samples, row.mean_plies, row.games_per_second
        ));
        Ok(stats)
    }

    pub(crate) fn selfplay_row(
        &self,
        generation: u32,
        stats: &SelfPlayStats,
        net_batch_mean: f64,
        cache_hit_rate: f64,
    ) -> SelfPlayRow {
        let reason = |r: &str| stats.reasons.get(r).copied().unwrap_or(0);
        SelfPlayRow {
            generation,
            games: stats.games,
            samples: stats.samples,
            foxes_wins: stats.foxes_wins,
            geese_wins: stats.geese_wins,
            draws: stats.draws,
            fewer_than_nine: reason("fewer-than-nine"),
            pen_filled: reason("pen-filled"),
            no_moves: reason("no-moves"),
            threefold: reason("threefold"),
            fifty_moves: reason("fifty-moves"),
            fewer_than_four: reason("fewer-than-four"),
            resigned: reason("resigned"),
            max_plies: reason("max-plies"),
            mean_plies: stats.plies as f64 / stats.games.max(1) as f64,
            resign_checked: stats.resign_checked,
            resign_false: stats.resign_false,
            games_per_second: stats.games as f64 / stats.seconds.max(1e-9),
            // 0: the totals of shard headers written before the count.
            positions_per_second: match stats.plies_played {
                0 => stats.plies,
                played => played,
            } as f64
                / stats.seconds.max(1e-9),
            seconds: stats.seconds,
            net_batch_mean,
            cache_hit_rate,
        }
    }

    /// The inference servers for checkpoint `generation`, as self-play's
    /// `workers` workers use them (`network.inference_servers`): each owns
    /// a copy of the network, its cache and its share of
    /// `run.torch_threads`. They start one after another, so that a later
    /// one runs in the precision the first one's `auto` trial chose and no
    /// server sets its thread count while another is running.
    pub(crate) fn selfplay_evaluators(
        &self,
        generation: u32,
        workers: usize,
    ) -> Result<Vec<NetEvaluator>, TrainError> {
        let cfg = &self.config;
        let device = halatafl_nn::parse_device(&cfg.run.device)?;
        let (servers, threads) =
            cfg.network
                .inference_servers
                .plan(workers, cfg.run.torch_threads, device.is_cuda());
        if self.servers_logged.set(()).is_ok() && servers > 1 {
            self.log(&format!(
                "self-play: {servers} inference servers of {threads} libtorch thread{} each (network.inference_servers = {})",
                if threads == 1 { "" } else { "s" },
                cfg.network.inference_servers
            ));
        }
        let (trainer, _) = checkpoint::load(
            &self.checkpoint(generation),
            Some(cfg.net_config()?),
            device,
        )?;
        // What one worker's lockstep round sends: `auto` is timed there.
        let batch = (cfg.selfplay.concurrent_games * cfg.search.leaves_per_tree as usize)
            .clamp(1, cfg.network.max_batch);
        let mut evaluators = Vec::with_capacity(servers);
        for _ in 0..servers {
            let net = halatafl_nn::PreparedNet::new(&trainer.net, self.precision()?, device, batch);
            let evaluator = NetEvaluator::start(
                move || net.settle(),
                EvaluatorConfig {
                    threads,
                    ..self.evaluator_config()
                },
            );
            if let Some(trial) = evaluator.trial() {
                self.log(&format!("network.precision = auto: {trial}"));
            }
            let _ = self.settled_precision.set(evaluator.precision());
            evaluators.push(evaluator);
        }
        Ok(evaluators)
    }

    /// Generation `generation`'s self-play in turn (`halatafl train`): the
    /// previous checkpoint plays `selfplay.games` games, whose samples go to
    /// the generation's shards and whose totals to a `selfplay.csv` row and
    /// the log.
    pub fn selfplay_stage(
        &self,
        generation: u32,
        base_factory: &BaseFactory,
    ) -> Result<SelfPlayStats, TrainError> {
        let cfg = &self.config;
        let threads = self.worker_threads(
            cfg.selfplay.games,
            &format!("generation {generation} self-play"),
        );
        let evaluators = self.selfplay_evaluators(generation - 1, threads)?;
        let shard_dir = self.shard_dir(generation);
        std::fs::create_dir_all(&shard_dir).map_err(at(&shard_dir))?;
        let write = |piece: ShardPiece| -> Result<(), TrainError> {
            let name = format!("w{:02}_{:04}.shard", piece.thread, piece.part);
            write_shard(
                &shard_dir.join(name),
                piece.samples,
                generation,
                piece.games,
                None,
            )?;
            Ok(())
        };
        let pb = bar(cfg.selfplay.games as u64, &format!("selfplay {generation}"));
        let finished: Mutex<Vec<FinishedGame>> = Mutex::new(Vec::new());
        let on_game = |g: &FinishedGame| {
            finished.lock().expect("games lock").push(g.clone());
            pb.inc(1);
            pb.set_message(format!(
                "last: {} ({}) in {} plies",
                g.result, g.reason, g.plies
            ));
        };
        let starts = self.start_positions(generation)?;
        let suite_starts = self.config.suite_and_book_starts()?;
        let variant = cfg.variant()?;
        // Generation 1 follows generation 0, which plays no self-play.
        let carried = match cfg.selfplay.carry_over && generation >= 2 {
            true => read_running(
                &self.shard_dir(generation - 1).join(RUNNING_FILE),
                generation - 1,
                variant,
            )?,
            false => Vec::new(),
        };
        let job = SelfPlayJob {
            config: cfg,
            starts: &starts,
            suite_starts: &suite_starts,
            threads,
            variant,
            evaluators: &evaluators,
            generation,
            seed: self.stage_seed(generation, Stage::SelfPlay),
            games: cfg.selfplay.games,
            write_shard: &write,
            on_game: &on_game,
            agents: Some(base_factory),
            carried: &carried,
        };
        let played = run_generation(&job)?;
        let stats = played.stats;
        pb.finish_and_clear();
        if cfg.selfplay.carry_over {
            let path = shard_dir.join(RUNNING_FILE);
            write_running(&path, generation, variant, &played.running)?;
        }
        let games = finished.into_inner().expect("games lock");
        self.write_selfplay_games(&shard_dir.join("games.csv"), generation, games)?;
        let ev: EvaluatorStats = evaluators.iter().map(NetEvaluator::stats).sum();
        let row = self.selfplay_row(generation, &stats, ev.mean_batch(), ev.hit_rate());
        append_rows(&self.dir.join("selfplay.csv"), vec![row.clone()])?;
        self.log(&(format!(
            "generation {generation} self-play: {} games ({} foxes / {} geese / {} draws), {} samples, {:.1} plies/game, {:.2} games/s, {:.0} positions/s, resign false {}/{}, net batch {:.1}, cache hits {:.0}%",
            row.games, row.foxes_wins, row.geese_wins, row.draws, row.samples, row.mean_plies, row.games_per_second,
            row.positions_per_second, row.resign_false, row.resign_checked, row.net_batch_mean, 100.0 * row.cache_hit_rate
        ) + &drawn_starts_note(&stats, cfg.selfplay.has_start_pool())
            + &carry_note(&stats, cfg.selfplay.carry_over.then_some(&played.running[..]))
            + &proven_note(&stats, &cfg.selfplay)));
        Ok(stats)
    }
}

impl Run {
    /// Writes self-play's games as `path` (atomically), in game order, in
    /// the columns of [`SelfPlayGameRow`]: the analysis board lists them.
    fn write_selfplay_games(
        &self,
        path: &Path,
        generation: u32,
        mut games: Vec<FinishedGame>,
    ) -> Result<(), TrainError> {
        let cfg = &self.config;
        let variant = cfg.variant()?.to_string();
        games.sort_by_key(|g| g.index);
        let player = |g: &FinishedGame, side: Side| {
            if g.opponent == Some(side) {
                cfg.selfplay.opponent.clone()
            } else {
                "selfplay".to_string()
            }
        };
        let rows: Vec<SelfPlayGameRow> = games
            .into_iter()
            .map(|g| SelfPlayGameRow {
                generation,
                game: g.index + 1,
                foxes: player(&g, Side::Foxes),
                geese: player(&g, Side::Geese),
                result: g.result.to_string(),
                reason: g.reason,
                plies: g.plies,
                moves: g.moves,
                start: g.start.unwrap_or_default(),
                variant: variant.clone(),
            })
            .collect();
        halatafl_arena::write_csv_atomic(path, &rows)?;
        Ok(())
    }
}

/// Longest `--worker` id.
pub const MAX_WORKER_ID: usize = 32;

/// A worker id is 1 to [`MAX_WORKER_ID`] ASCII letters, digits and `_`: it
/// goes into file names, and `-` separates it from the sequence number.
pub fn check_worker_id(id: &str) -> Result<(), TrainError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_WORKER_ID
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        return Ok(());
    }
    Err(TrainError::Refused(format!(
        "--worker {id:?}: a worker id is 1 to {MAX_WORKER_ID} letters, digits or `_`"
    )))
}

/// The file name of worker `worker`'s shard number `seq`.
pub fn worker_shard_name(worker: &str, seq: u64) -> String {
    format!("w{worker}-{seq:06}.shard")
}

/// The worker and sequence number of an asynchronous shard's file name
/// (none for other names, e.g. `halatafl train`'s `w00_0000.shard`).
pub fn parse_worker_shard_name(name: &str) -> Option<(&str, u64)> {
    let (worker, seq) = name
        .strip_prefix('w')?
        .strip_suffix(".shard")?
        .rsplit_once('-')?;
    check_worker_id(worker).ok()?;
    if seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((worker, seq.parse().ok()?))
}

/// The next sequence number of `worker` in shard folder `dir`: one past its
/// highest there, 0 when it has none (or the folder does not exist).
pub fn next_shard_seq(dir: &Path, worker: &str) -> Result<u64, TrainError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(TrainError::io(dir, e)),
    };
    let mut next = 0;
    for entry in entries {
        let name = entry.map_err(at(dir))?.file_name();
        if let Some((w, seq)) = parse_worker_shard_name(&name.to_string_lossy()) {
            if w == worker {
                next = next.max(seq + 1);
            }
        }
    }
    Ok(next)
}

impl Run {
    /// `halatafl stage selfplay --run DIR --worker ID`: see the module doc.
    pub fn run_selfplay_worker(
        &self,
        worker: &str,
        base_factory: &BaseFactory,
    ) -> Result<(), TrainError> {
        check_worker_id(worker)?;
        self.require_async()?;
        let _lock = self.exclusive(
            &format!("selfplay-w{worker}"),
            &format!("a self-play worker with --worker {worker}"),
        )?;
        halatafl_nn::set_threads(self.config.run.torch_threads);
        let cfg = &self.config;
        let last = cfg.run.generations;
        let variant = cfg.variant()?;
        let games = cfg.asynchronous.shard_games;
        let suite_starts = self.config.suite_and_book_starts()?;
        let mut loaded: Option<(u32, Vec<NetEvaluator>, Vec<Position>)> = None;
        // With selfplay.carry_over, the games the last batch left running
        // (held in memory: they are lost if the worker is killed).
        let mut running: Vec<RunningGame> = Vec::new();
        let mut counts = SampleCounts::default();
        let mut waiting = false;
        loop {
            let newest = self.newest_checkpoint()?.ok_or_else(|| {
                TrainError::Refused(format!("{}: no checkpoint", self.dir.display()))
            })?;
            if newest >= last || self.is_finished() {
                self.log(&format!(
                    "self-play worker {worker}: checkpoint {newest} is the run's last; stopping"
                ));
                return Ok(());
            }
            let a = &cfg.asynchronous;
            let played: u64 = counts.refresh(self)?.values().sum();
            let (steps, batch) = (cfg.train.steps_per_generation, cfg.train.batch_size);
            if !selfplay_may_play(
                newest,
                played,
                a.max_ahead_generations,
                steps,
                batch,
                a.train_ratio,
            ) {
                if !waiting {
                    self.log(&format!(
                        "self-play worker {worker}: {played} samples are enough up to checkpoint {}; waiting for the learner",
                        newest + 1 + a.max_ahead_generations
                    ));
                    waiting = true;
                }
                self.poll_pause();
                continue;
            }
            waiting = false;
            if loaded.as_ref().map(|(g, _, _)| *g) != Some(newest) {
                // The old servers stop before the new ones start.
                drop(loaded.take());
                loaded = Some((
                    newest,
                    self.selfplay_evaluators(newest, cfg.run.threads)?,
                    self.start_positions(newest + 1)?,
                ));
                self.log(&format!(
                    "self-play worker {worker}: playing with checkpoint {newest}"
                ));
            }
            let (checkpoint, evaluators, starts) = loaded.as_ref().expect("just loaded");
            let generation = checkpoint + 1;
            let dir = self.shard_dir(generation);
            std::fs::create_dir_all(&dir).map_err(at(&dir))?;
            let seq = next_shard_seq(&dir, worker)?;
            let samples: Mutex<Vec<StoredSample>> = Mutex::new(Vec::new());
            let finished: Mutex<Vec<FinishedGame>> = Mutex::new(Vec::new());
            let collect = |piece: ShardPiece| -> Result<(), TrainError> {
                samples
                    .lock()
                    .expect("samples lock")
                    .extend_from_slice(piece.samples);
                Ok(())
            };
            let job = SelfPlayJob {
                config: cfg,
                starts,
                suite_starts: &suite_starts,
                threads: cfg.run.threads.min(games).max(1),
                variant,
                evaluators,
                generation,
                seed: halatafl_arena::derive_seed(
                    self.stage_seed(generation, Stage::SelfPlay),
                    (crc32fast::hash(worker.as_bytes()) as u64) << 32 ^ seq,
                ),
                games,
                write_shard: &collect,
                on_game: &|g: &FinishedGame| finished.lock().expect("games lock").push(g.clone()),
                agents: Some(base_factory),
                carried: &running,
            };
            let played = run_generation(&job)?;
            let stats = played.stats;
            running = played.running;
            let samples = samples.into_inner().expect("samples lock");
            let ev: EvaluatorStats = evaluators.iter().map(NetEvaluator::stats).sum();
            let origin = ShardOrigin {
                worker: worker.to_string(),
                checkpoint: *checkpoint,
                stats,
                net_batch_mean: ev.mean_batch(),
                cache_hit_rate: ev.hit_rate(),
            };
            let name = worker_shard_name(worker, seq);
            // The games first: a shard without its games file is possible
            // (killed between the two), a games file without its shard is
            // overwritten by the next piece of the same sequence number.
            let games_name = format!("{}.games.csv", name.trim_end_matches(".shard"));
            let games = finished.into_inner().expect("games lock");
            self.write_selfplay_games(&dir.join(games_name), generation, games)?;
            write_shard(
                &dir.join(&name),
                &samples,
                generation,
                origin.stats.games,
                Some(&origin),
            )?;
            self.log(&format!(
                "self-play worker {worker}: shards/gen_{generation:04}/{name}: {} games, {} samples (checkpoint {checkpoint}), {:.2} games/s",
                origin.stats.games,
                samples.len(),
                origin.stats.games as f64 / origin.stats.seconds.max(1e-9)
            ));
        }
    }

    /// The selfplay.csv row of generation `generation` in the asynchronous
    /// mode: the totals of the workers' shards of that generation present
    /// now (none if there are none). The learner writes it when it publishes
    /// checkpoint `generation`, which trained on them; shards a worker still
    /// finishes with the older checkpoint after that are trained on later
    /// but not counted. Rates are per worker (games over summed
    /// worker-seconds); batch size and cache hits are weighted by games.
    pub(crate) fn selfplay_row_from_shards(
        &self,
        generation: u32,
    ) -> Result<Option<SelfPlayRow>, TrainError> {
        let mut stats = SelfPlayStats::default();
        let (mut batch, mut hits) = (0.0, 0.0);
        for path in self.shard_files(generation)? {
            let Some(ShardHeader {
                origin: Some(origin),
                ..
            }) = self.read_run_shard_header(generation, &path)?
            else {
                continue;
            };
            let games = origin.stats.games as f64;
            batch += origin.net_batch_mean * games;
            hits += origin.cache_hit_rate * games;
            stats.merge(&origin.stats);
        }
        if stats.games == 0 {
            return Ok(None);
        }
        let games = stats.games as f64;
        Ok(Some(self.selfplay_row(
            generation,
            &stats,
            batch / games,
            hits / games,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_round_trip_and_sequences_continue_per_worker() {
        assert_eq!(worker_shard_name("a_1", 7), "wa_1-000007.shard");
        assert_eq!(
            parse_worker_shard_name("wa_1-000007.shard"),
            Some(("a_1", 7))
        );
        assert_eq!(
            parse_worker_shard_name("w3-1234567.shard"),
            Some(("3", 1234567))
        );
        for other in [
            "w00_0000.shard",
            "expert_0000.shard",
            ".w3-000001.shard.tmp-77",
            "w3-.shard",
            "w-000001.shard",
            "w3-00x1.shard",
            "wa-b-000001.shard",
        ] {
            assert_eq!(parse_worker_shard_name(other), None, "{other}");
        }
        for bad in ["", "a-b", "a b", "x/y", &"w".repeat(MAX_WORKER_ID + 1)] {
            assert!(check_worker_id(bad).is_err(), "{bad:?}");
        }

        let dir = std::env::temp_dir().join(format!("halatafl-seq-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(next_shard_seq(&dir, "1").unwrap(), 0, "no folder yet");
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "w1-000000.shard",
            "w1-000004.shard",
            "w2-000009.shard",
            "w00_0000.shard",
            ".w1-000005.shard.tmp-123",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        // After the worker's highest (gaps are not refilled), per worker;
        // a temporary file of a killed write is not a shard.
        assert_eq!(next_shard_seq(&dir, "1").unwrap(), 5);
        assert_eq!(next_shard_seq(&dir, "2").unwrap(), 10);
        assert_eq!(next_shard_seq(&dir, "3").unwrap(), 0);
        std::fs::remove_dir_all(&dir).ok();
    }
}
