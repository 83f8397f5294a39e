//! A training run is a directory; its stages talk only through files in it
//! (KataGo's way), so self-play workers and the trainer can later run as
//! separate processes on a cluster:
//!
//! ```text
//! experiments/<run>/
//!   config.toml        the resolved config (every default written out)
//!   run.json           git revision, halatafl version, start time, command
//!   progress.json      the last completed stage: {"generation": g, "stage": "..."}
//!   log.txt            one line per event
//!   checkpoints/gen_NNNN.safetensors   gen 0 is the seeded initial network
//!   shards/gen_NNNN/wWW_PPPP.shard     self-play samples of generation N
//!   selfplay.csv  train.csv  eval.csv
//! ```
//!
//! Each generation g runs self-play with checkpoint g-1, trains checkpoint g
//! on the shards of the replay window, and evaluates checkpoint g. A stage
//! writes its files atomically, then its CSV rows, then `progress.json`. On
//! resume, rows and shards of a stage that did not finish are removed and the
//! stage is run again from its start, so a crash at any moment loses only the
//! stage in progress and never duplicates a row. Without `progress.json` a
//! run restarts from its first stage only if nothing past that stage exists
//! (see [`Run::execute`]): completed work is never overwritten silently.

use crate::config::RunConfig;
use crate::selfplay::{run_generation, FinishedGame, SelfPlayJob, SelfPlayStats};
use crate::shard::{read_shard, write_shard};
use halatafl_agent::{Agent, AgentSpec, SpecError};
use halatafl_arena::MatchSummary;
use halatafl_arena::{match_jobs, play_games, GameRow, MatchConfig};
use halatafl_nn::checkpoint::{self, write_atomically};
use halatafl_nn::{Batch, EvaluatorConfig, NetEvaluator, NetRegistry, Precision, Sample, Trainer};
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// Builds non-network agents (`random`, `alphabeta:...`, `mcts:...`).
pub type BaseFactory = dyn Fn(&str, u64) -> Result<Box<dyn Agent>, SpecError> + Sync;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    SelfPlay,
    Train,
    Eval,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub generation: u32,
    pub stage: Stage,
}

impl Progress {
    /// The stage after this one.
    fn next(self) -> (u32, Stage) {
        match self.stage {
            Stage::SelfPlay => (self.generation, Stage::Train),
            Stage::Train => (self.generation, Stage::Eval),
            Stage::Eval => (self.generation + 1, Stage::SelfPlay),
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SelfPlayRow {
    pub generation: u32,
    pub games: usize,
    pub samples: usize,
    pub foxes_wins: usize,
    pub geese_wins: usize,
    pub draws: usize,
    pub fewer_than_nine: usize,
    pub pen_filled: usize,
    pub no_moves: usize,
    pub threefold: usize,
    pub fifty_moves: usize,
    pub fewer_than_four: usize,
    pub resigned: usize,
    pub max_plies: usize,
    pub mean_plies: f64,
    pub resign_checked: usize,
    pub resign_false: usize,
    pub games_per_second: f64,
    pub positions_per_second: f64,
    pub seconds: f64,
    pub net_batch_mean: f64,
    pub cache_hit_rate: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TrainRow {
    pub generation: u32,
    pub step: u64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub l2_loss: f64,
    pub total_loss: f64,
    pub lr: f64,
    pub grad_norm: f64,
    pub samples_per_second: f64,
    pub window_samples: usize,
}

/// An evaluation game: the arena's columns plus the generation and opponent.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EvalRow {
    pub generation: u32,
    pub opponent: String,
    pub game: usize,
    pub opening: usize,
    pub opening_moves: String,
    pub foxes: String,
    pub geese: String,
    pub result: String,
    pub reason: String,
    pub plies: usize,
    pub moves: String,
    pub foxes_seconds: f64,
    pub geese_seconds: f64,
    pub seed: u64,
    pub variant: String,
}

impl EvalRow {
    pub fn new(generation: u32, opponent: &str, r: &GameRow) -> EvalRow {
        EvalRow {
            generation,
            opponent: opponent.to_string(),
            game: r.game,
            opening: r.opening,
            opening_moves: r.opening_moves.clone(),
            foxes: r.foxes.clone(),
            geese: r.geese.clone(),
            result: r.result.clone(),
            reason: r.reason.clone(),
            plies: r.plies,
            moves: r.moves.clone(),
            foxes_seconds: r.foxes_seconds,
            geese_seconds: r.geese_seconds,
            seed: r.seed,
            variant: r.variant.clone(),
        }
    }

    /// The arena's record of the game (for summaries and ratings).
    pub fn game_row(&self) -> GameRow {
        GameRow {
            game: self.game,
            opening: self.opening,
            opening_moves: self.opening_moves.clone(),
            foxes: self.foxes.clone(),
            geese: self.geese.clone(),
            result: self.result.clone(),
            reason: self.reason.clone(),
            plies: self.plies,
            moves: self.moves.clone(),
            foxes_seconds: self.foxes_seconds,
            geese_seconds: self.geese_seconds,
            seed: self.seed,
            variant: self.variant.clone(),
        }
    }
}

pub struct Run {
    pub dir: PathBuf,
    pub config: RunConfig,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// A run CSV that cannot be read as its rows: the file and line, and why.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{path}, line {line}: {why}")]
pub struct CsvError {
    pub path: PathBuf,
    pub line: u64,
    pub why: String,
}

/// Reads a run CSV (`selfplay.csv`, `train.csv`, `eval.csv`) as `T` rows. A
/// missing or empty file has none: the stage has not written rows yet, or
/// resuming removed them all. Any other file must have a header that names
/// every column of `T` (extra columns are ignored, as serde ignores them):
/// without that check a file of one line of anything read as "no rows", so
/// `report` skipped it silently and the next stage replaced it.
pub fn read_csv_rows<T: DeserializeOwned + Serialize + Default>(
    path: &Path,
) -> Result<Vec<T>, CsvError> {
    let error = |line: u64, why: String| CsvError {
        path: path.to_path_buf(),
        line,
        why,
    };
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut reader = csv::Reader::from_path(path).map_err(|e| error(0, e.to_string()))?;
    let header = reader
        .headers()
        .map_err(|e| error(1, e.to_string()))?
        .clone();
    if header.is_empty() {
        return Ok(Vec::new());
    }
    let missing: Vec<String> = csv_columns::<T>()
        .into_iter()
        .filter(|c| !header.iter().any(|h| h == c))
        .collect();
    if !missing.is_empty() {
        let named = match missing.len() {
            n if n > 3 => format!("{} and {} more", missing[..3].join(", "), n - 3),
            _ => missing.join(", "),
        };
        return Err(error(
            1,
            format!(
                "the header lacks the column(s) {named}: not a file this version of halatafl \
                 wrote, or damaged"
            ),
        ));
    }
    reader
        .deserialize()
        .enumerate()
        .map(|(i, row)| {
            row.map_err(|e| {
                let line = e.position().map_or(i as u64 + 2, |p| p.line());
                error(line, e.to_string())
            })
        })
        .collect()
}

/// The column names of a CSV of `T` rows, in order (the header csv writes).
fn csv_columns<T: Serialize + Default>() -> Vec<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.serialize(T::default()).expect("a row serialises");
    let bytes = writer.into_inner().expect("writing to memory");
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header = reader.headers().expect("csv just written").clone();
    header.iter().map(str::to_string).collect()
}

fn read_rows<T: DeserializeOwned + Serialize + Default>(path: &Path) -> Result<Vec<T>, String> {
    read_csv_rows(path).map_err(|e| e.to_string())
}

/// Rewrites a CSV atomically with `rows`.
fn write_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for r in rows {
        writer.serialize(r).map_err(|e| io_err(path, e))?;
    }
    let bytes = writer.into_inner().map_err(|e| io_err(path, e))?;
    write_atomically(path, &bytes).map_err(|e| io_err(path, e))
}

fn append_rows<T: Serialize + DeserializeOwned + Default>(
    path: &Path,
    new: Vec<T>,
) -> Result<(), String> {
    let mut rows: Vec<T> = read_rows(path)?;
    rows.extend(new);
    write_rows(path, &rows)
}

/// Keeps only rows whose generation passes `keep` (removes a crashed stage's rows).
fn retain_rows<T: Serialize + DeserializeOwned + Default>(
    path: &Path,
    generation_of: impl Fn(&T) -> u32,
    keep: impl Fn(u32) -> bool,
) -> Result<(), String> {
    let rows: Vec<T> = read_rows(path)?;
    let before = rows.len();
    let kept: Vec<T> = rows
        .into_iter()
        .filter(|r| keep(generation_of(r)))
        .collect();
    if kept.len() != before {
        write_rows(path, &kept)?;
    }
    Ok(())
}

fn git_revision() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(
            "{prefix:>12} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}

impl Run {
    pub fn checkpoint(&self, generation: u32) -> PathBuf {
        self.dir
            .join("checkpoints")
            .join(format!("gen_{generation:04}.safetensors"))
    }

    fn shard_dir(&self, generation: u32) -> PathBuf {
        self.dir.join("shards").join(format!("gen_{generation:04}"))
    }

    pub fn log(&self, line: &str) {
        let path = self.dir.join("log.txt");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            let _ = writeln!(f, "[{}] {line}", chrono_like_now());
        }
        eprintln!("{line}");
    }

    /// Creates a new run directory (refuses one that already holds a run).
    pub fn create(dir: &Path, config: RunConfig, command: &str) -> Result<Run, String> {
        if dir.join("progress.json").exists() || dir.join("config.toml").exists() {
            return Err(format!(
                "{} already holds a run: use `halatafl train --resume {}`",
                dir.display(),
                dir.display()
            ));
        }
        std::fs::create_dir_all(dir.join("checkpoints")).map_err(|e| io_err(dir, e))?;
        std::fs::create_dir_all(dir.join("shards")).map_err(|e| io_err(dir, e))?;
        let run = Run {
            dir: dir.to_path_buf(),
            config,
        };
        write_atomically(&dir.join("config.toml"), run.config.to_toml().as_bytes())
            .map_err(|e| io_err(dir, e))?;
        let info = serde_json::json!({
            "git_revision": git_revision(),
            "halatafl_version": env!("CARGO_PKG_VERSION"),
            "started": chrono_like_now(),
            "command": command,
            "encoding_version": halatafl_nn::encoding::ENCODING_VERSION,
        });
        write_atomically(
            &dir.join("run.json"),
            serde_json::to_string_pretty(&info)
                .expect("json")
                .as_bytes(),
        )
        .map_err(|e| io_err(dir, e))?;
        Ok(run)
    }

    /// Opens an existing run to resume it.
    pub fn open(dir: &Path) -> Result<Run, String> {
        let config = RunConfig::load(&dir.join("config.toml"))?;
        Ok(Run {
            dir: dir.to_path_buf(),
            config,
        })
    }

    /// Changes how many generations the run goes to, so a finished run can
    /// train longer (`halatafl train --resume DIR --generations N`). Completed
    /// generations stay as they are; the learning-rate schedule is recomputed
    /// over the new total, so from the next training step on the rate follows
    /// the longer schedule (a cosine run's rate rises from `min_lr` to where
    /// the longer curve is: a warm restart). An extended run therefore differs
    /// from one configured for N generations from the start; `run.json` and
    /// the log record every change.
    pub fn set_generations(&mut self, generations: u32, command: &str) -> Result<(), String> {
        let old = self.config.run.generations;
        if generations == old {
            return Ok(());
        }
        let reached = self.progress()?.map_or(0, |p| p.generation);
        if generations < reached {
            return Err(format!(
                "--generations {generations}: {} has reached generation {reached}; \
                 a run can be extended or shortened to a count from {} up",
                self.dir.display(),
                reached.max(1)
            ));
        }
        let mut config = self.config.clone();
        config.run.generations = generations;
        config.validate()?;
        let info_path = self.dir.join("run.json");
        let mut info: serde_json::Value = match std::fs::read_to_string(&info_path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| io_err(&info_path, format!("unreadable run file: {e}")))?,
            Err(_) => serde_json::json!({}),
        };
        let change = serde_json::json!({
            "from": old,
            "to": generations,
            "after_generation": reached,
            "at": chrono_like_now(),
            "git_revision": git_revision(),
            "command": command,
        });
        match info
            .get_mut("generations_changed")
            .and_then(|v| v.as_array_mut())
        {
            Some(list) => list.push(change),
            None => info["generations_changed"] = serde_json::json!([change]),
        }
        write_atomically(
            &info_path,
            serde_json::to_string_pretty(&info)
                .expect("json")
                .as_bytes(),
        )
        .map_err(|e| io_err(&info_path, e))?;
        let config_path = self.dir.join("config.toml");
        write_atomically(&config_path, config.to_toml().as_bytes())
            .map_err(|e| io_err(&config_path, e))?;
        self.config = config;
        self.log(&format!(
            "generations {old} -> {generations} (after generation {reached}); \
             the learning-rate schedule now spans {generations} generations"
        ));
        Ok(())
    }

    pub fn progress(&self) -> Result<Option<Progress>, String> {
        let path = self.dir.join("progress.json");
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| io_err(&path, e))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| io_err(&path, format!("unreadable progress file: {e}")))
    }

    fn mark(&self, generation: u32, stage: Stage) -> Result<(), String> {
        let path = self.dir.join("progress.json");
        let text = serde_json::to_string(&Progress { generation, stage }).expect("json");
        write_atomically(&path, text.as_bytes()).map_err(|e| io_err(&path, e))
    }

    /// Removes what a stage that did not finish may have left.
    fn clean_unfinished(&self, generation: u32, stage: Stage) -> Result<(), String> {
        match stage {
            Stage::SelfPlay => {
                let dir = self.shard_dir(generation);
                if dir.exists() {
                    std::fs::remove_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
                }
                retain_rows::<SelfPlayRow>(
                    &self.dir.join("selfplay.csv"),
                    |r| r.generation,
                    |g| g < generation,
                )
            }
            Stage::Train => retain_rows::<TrainRow>(
                &self.dir.join("train.csv"),
                |r| r.generation,
                |g| g < generation,
            ),
            Stage::Eval => retain_rows::<EvalRow>(
                &self.dir.join("eval.csv"),
                |r| r.generation,
                |g| g < generation,
            ),
        }
    }

    fn stage_seed(&self, generation: u32, stage: Stage) -> u64 {
        halatafl_arena::derive_seed(
            self.config.run.seed,
            (generation as u64) << 8 | stage as u64,
        )
    }

    fn evaluator_config(&self) -> EvaluatorConfig {
        EvaluatorConfig {
            max_batch: self.config.network.max_batch,
            cache_entries: self.config.network.cache_entries,
            threads: self.config.run.torch_threads,
            ..EvaluatorConfig::default()
        }
    }

    /// Runs (or resumes) every remaining stage. Refuses, before any stage,
    /// a damaged CSV and a run without `progress.json` that holds completed
    /// work (see `refuse_completed_work_without_progress`).
    pub fn execute(&self, base_factory: &BaseFactory) -> Result<(), String> {
        // A damaged CSV stops the run here, before any stage, rather than
        // when a stage appends to it (or, before, replaced it).
        read_rows::<SelfPlayRow>(&self.dir.join("selfplay.csv"))?;
        read_rows::<TrainRow>(&self.dir.join("train.csv"))?;
        read_rows::<EvalRow>(&self.dir.join("eval.csv"))?;
        let progress = self.progress()?;
        if progress.is_none() {
            self.refuse_completed_work_without_progress()?;
        }
        halatafl_nn::set_threads(self.config.run.torch_threads);
        // With an expert, generation 0 is made by the run's first stages
        // (a bad expert spec fails there at once).
        let bootstrap = self.config.bootstrap.enabled();
        if !bootstrap && !self.checkpoint(0).exists() {
            let trainer = self.initial_trainer(tch::Device::Cpu)?;
            let mut extra = std::collections::BTreeMap::new();
            extra.insert("generation".to_string(), "0".to_string());
            checkpoint::save(&trainer, &self.checkpoint(0), &extra)
                .map_err(|e| io_err(&self.checkpoint(0), e))?;
            self.log(&format!(
                "generation 0: initial {} network written",
                trainer.net.config
            ));
        }
        let (mut generation, mut stage) = match progress {
            None if bootstrap => (0, Stage::SelfPlay),
            None => (1, Stage::SelfPlay),
            Some(p) => p.next(),
        };
        while generation <= self.config.run.generations {
            self.clean_unfinished(generation, stage)?;
            match stage {
                Stage::SelfPlay if generation == 0 => {
                    self.bootstrap_stage(base_factory)?;
                }
                Stage::SelfPlay => {
                    self.selfplay_stage(generation)?;
                }
                Stage::Train => self.train_stage(generation)?,
                Stage::Eval => {
                    let last = generation == self.config.run.generations;
                    if last || generation % self.config.eval.every == 0 {
                        self.eval_stage(generation, base_factory)?;
                    }
                }
            }
            self.mark(generation, stage)?;
            (generation, stage) = Progress { generation, stage }.next();
        }
        Ok(())
    }

    /// The generation of a run's first stage: the expert's games (0) or the
    /// first self-play (1).
    fn first_generation(&self) -> u32 {
        if self.config.bootstrap.enabled() {
            0
        } else {
            1
        }
    }

    /// Without `progress.json` a run resumes from its first stage, which
    /// removes and redoes what that stage writes. That is right only for a
    /// run stopped before its first stage was marked done; if anything a
    /// later stage writes is present (`progress.json` was deleted or lost),
    /// resuming would redo the expert games and every generation and
    /// overwrite their checkpoints, so it is refused with what is there.
    /// Progress is not rebuilt from the files: a checkpoint or shard proves
    /// its own stage ended but not that the CSV rows of the stages before it
    /// were all written, so any rebuilt progress could silently skip work.
    pub(crate) fn refuse_completed_work_without_progress(&self) -> Result<(), String> {
        let first = self.first_generation();
        let names_in = |dir: &Path, keep: &dyn Fn(&str) -> bool| -> Result<Vec<String>, String> {
            if !dir.exists() {
                return Ok(Vec::new());
            }
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .map_err(|e| io_err(dir, e))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.') && keep(n))
                .collect();
            names.sort();
            Ok(names)
        };
        // A run from scratch writes its seeded initial network before any stage.
        let initial = format!("gen_{:04}.safetensors", 0);
        let bootstrap = self.config.bootstrap.enabled();
        let checkpoints = names_in(&self.dir.join("checkpoints"), &|n: &str| {
            n.ends_with(".safetensors") && (bootstrap || n != initial)
        })?;
        let first_shards = format!("gen_{first:04}");
        let shards = names_in(&self.dir.join("shards"), &|n: &str| n != first_shards)?;
        let mut found = Vec::new();
        if !checkpoints.is_empty() {
            found.push(format!("checkpoints/{}", checkpoints.join(", ")));
        }
        if !shards.is_empty() {
            found.push(format!("shards/{}", shards.join(", ")));
        }
        let later_selfplay = read_rows::<SelfPlayRow>(&self.dir.join("selfplay.csv"))?
            .iter()
            .any(|r| r.generation != first);
        if later_selfplay {
            found.push(format!("selfplay.csv rows after generation {first}"));
        }
        if !read_rows::<TrainRow>(&self.dir.join("train.csv"))?.is_empty() {
            found.push("train.csv rows".into());
        }
        if !read_rows::<EvalRow>(&self.dir.join("eval.csv"))?.is_empty() {
            found.push("eval.csv rows".into());
        }
        if found.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{dir} has no progress.json but holds completed work: {}. Resuming would start the run \
             over and overwrite it, so nothing was done. Restore {dir}/progress.json (it names the \
             last completed stage, e.g. {{\"generation\":2,\"stage\":\"eval\"}}; log.txt lists \
             the stages that ended), or start a new run in another directory.",
            found.join("; "),
            dir = self.dir.display()
        ))
    }

    /// `run.threads`, but no more than the stage has games: a worker without
    /// a game would only idle. Logged when it caps.
    fn worker_threads(&self, games: usize, stage: &str) -> usize {
        let threads = self.config.run.threads;
        let used = threads.min(games).max(1);
        if used < threads {
            self.log(&format!(
                "{stage}: {used} worker threads for {games} games (run.threads = {threads})"
            ));
        }
        used
    }

    /// The seeded, untrained network every run starts from.
    fn initial_trainer(&self, device: tch::Device) -> Result<Trainer, String> {
        Ok(Trainer::new(
            self.config.net_config()?,
            self.config.train_config()?,
            device,
            self.config.run.seed,
        ))
    }

    /// Generation 0 of a bootstrapped run: the expert plays itself and its
    /// moves become samples (see [`crate::bootstrap`]). The games are also
    /// kept in `bootstrap.csv`, in the arena's columns.
    pub fn bootstrap_stage(&self, base_factory: &BaseFactory) -> Result<SelfPlayStats, String> {
        let cfg = &self.config;
        let b = &cfg.bootstrap;
        let variant = cfg.variant()?;
        let jobs = crate::bootstrap::expert_jobs(
            &b.agent,
            b.games,
            b.opening_plies,
            variant,
            self.stage_seed(0, Stage::SelfPlay),
        )
        .map_err(|e| format!("[bootstrap] {e}"))?;
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
        .map_err(|e| format!("[bootstrap] {e}"))?;
        pb.finish_and_clear();
        let seconds = started.elapsed().as_secs_f64();
        let mut stats = SelfPlayStats::default();
        let mut samples = Vec::new();
        for row in &rows {
            let (outcome, game_samples) = crate::bootstrap::samples_from_game(row, variant)?;
            stats.add(&FinishedGame {
                index: row.game,
                result: outcome.result_word(),
                reason: outcome.reason.name().to_string(),
                plies: row.plies,
                samples: game_samples.len(),
                false_resign: None,
            });
            samples.extend(game_samples);
        }
        stats.seconds = seconds;
        let dir = self.shard_dir(0);
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        let per_shard = cfg.selfplay.samples_per_shard.max(1);
        for (part, chunk) in samples.chunks(per_shard).enumerate() {
            let path = dir.join(format!("expert_{part:04}.shard"));
            write_shard(&path, chunk, 0, 0).map_err(|e| e.to_string())?;
        }
        halatafl_arena::write_csv_atomic(&self.dir.join("bootstrap.csv"), &rows)
            .map_err(|e| e.to_string())?;
        let row = self.selfplay_row(0, &stats, 0.0, 0.0);
        append_rows(&self.dir.join("selfplay.csv"), vec![row.clone()])?;
        self.log(&format!(
            "generation 0 expert games ({}): {} games ({} foxes / {} geese / {} draws), {} samples, {:.1} plies/game, {:.2} games/s",
            b.agent, row.games, row.foxes_wins, row.geese_wins, row.draws, row.samples, row.mean_plies, row.games_per_second
        ));
        Ok(stats)
    }

    fn selfplay_row(
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
            positions_per_second: stats.plies as f64 / stats.seconds.max(1e-9),
            seconds: stats.seconds,
            net_batch_mean,
            cache_hit_rate,
        }
    }

    pub fn selfplay_stage(&self, generation: u32) -> Result<SelfPlayStats, String> {
        let cfg = &self.config;
        let device = halatafl_nn::parse_device(&cfg.run.device).map_err(|e| e.to_string())?;
        let precision: Precision = cfg.network.precision.parse()?;
        let (trainer, _) = checkpoint::load(
            &self.checkpoint(generation - 1),
            Some(cfg.net_config()?),
            device,
        )
        .map_err(|e| e.to_string())?;
        let net = halatafl_nn::InferenceNet::new(&trainer.net, precision, device);
        drop(trainer);
        let evaluator = NetEvaluator::start(move || net, self.evaluator_config());
        let pb = bar(cfg.selfplay.games as u64, &format!("selfplay {generation}"));
        let on_game = |g: &FinishedGame| {
            pb.inc(1);
            pb.set_message(format!(
                "last: {} ({}) in {} plies",
                g.result, g.reason, g.plies
            ));
        };
        let job = SelfPlayJob {
            config: cfg,
            threads: self.worker_threads(
                cfg.selfplay.games,
                &format!("generation {generation} self-play"),
            ),
            variant: cfg.variant()?,
            evaluator: &evaluator,
            generation,
            seed: self.stage_seed(generation, Stage::SelfPlay),
            shard_dir: &self.shard_dir(generation),
            on_game: &on_game,
        };
        let stats = run_generation(&job)?;
        pb.finish_and_clear();
        let ev = evaluator.stats();
        let row = self.selfplay_row(generation, &stats, ev.mean_batch(), ev.hit_rate());
        append_rows(&self.dir.join("selfplay.csv"), vec![row.clone()])?;
        self.log(&format!(
            "generation {generation} self-play: {} games ({} foxes / {} geese / {} draws), {} samples, {:.1} plies/game, {:.2} games/s, {:.0} positions/s, resign false {}/{}, net batch {:.1}, cache hits {:.0}%",
            row.games, row.foxes_wins, row.geese_wins, row.draws, row.samples, row.mean_plies, row.games_per_second,
            row.positions_per_second, row.resign_false, row.resign_checked, row.net_batch_mean, 100.0 * row.cache_hit_rate
        ));
        Ok(stats)
    }

    /// Samples of generation `g`'s shards, in file order, with the value
    /// target blended with the search value by `search_value_mix`.
    fn generation_samples(&self, g: u32) -> Result<Vec<Sample>, String> {
        let mix = self.config.replay.search_value_mix;
        let dir = self.shard_dir(g);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| io_err(&dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "shard")
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        files.sort();
        let mut out = Vec::new();
        for f in files {
            let (_, samples) = read_shard(&f).map_err(|e| e.to_string())?;
            for s in samples {
                let mut sample = s.sample;
                for k in 0..3 {
                    sample.wdl[k] = (1.0 - mix) * sample.wdl[k] + mix * s.search_wdl[k];
                }
                out.push(sample);
            }
        }
        Ok(out)
    }

    /// Self-play samples of the replay window, oldest generation first
    /// (generation 0's expert samples are drawn separately, see `train_stage`).
    fn window(&self, generation: u32) -> Result<Vec<Sample>, String> {
        if generation == 0 {
            return self.generation_samples(0);
        }
        let first = generation
            .saturating_sub(self.config.replay.window_generations - 1)
            .max(1);
        let mut out = Vec::new();
        for g in first..=generation {
            out.extend(self.generation_samples(g)?);
        }
        Ok(out)
    }

    pub fn train_stage(&self, generation: u32) -> Result<(), String> {
        let cfg = &self.config;
        let device = halatafl_nn::parse_device(&cfg.run.device).map_err(|e| e.to_string())?;
        let mut trainer = if generation == 0 {
            self.initial_trainer(device)?
        } else {
            checkpoint::load(
                &self.checkpoint(generation - 1),
                Some(cfg.net_config()?),
                device,
            )
            .map_err(|e| e.to_string())?
            .0
        };
        // The schedule and optimizer settings come from this run's config.
        trainer.config = cfg.train_config()?;
        let window = self.window(generation)?;
        if window.is_empty() {
            return Err(format!(
                "generation {generation}: no samples in the replay window"
            ));
        }
        let expert_fraction = cfg.bootstrap.fraction_in(generation);
        let expert = if expert_fraction > 0.0 {
            self.generation_samples(0)?
        } else {
            Vec::new()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(self.stage_seed(generation, Stage::Train));
        let steps = if generation == 0 {
            cfg.bootstrap.steps
        } else {
            cfg.train.steps_per_generation
        };
        let pb = bar(steps, &format!("train {generation}"));
        let mut rows = Vec::new();
        let mut acc = (0.0, 0.0, 0.0, 0.0, 0.0, 0u64);
        let mut timer = Instant::now();
        for step in 0..steps {
            let drawn: Vec<Sample> = (0..cfg.train.batch_size)
                .map(|_| {
                    let from_expert = !expert.is_empty() && rng.random_bool(expert_fraction);
                    let pool = if from_expert { &expert } else { &window };
                    let s = &pool[rng.random_range(0..pool.len())];
                    if cfg.replay.mirror && rng.random_bool(0.5) {
                        s.mirror()
                    } else {
                        s.clone()
                    }
                })
                .collect();
            let refs: Vec<&Sample> = drawn.iter().collect();
            let batch = Batch::new(&refs, device);
            let l = match trainer.train_step(&batch) {
                Ok(l) => l,
                Err(e) => {
                    pb.finish_and_clear();
                    return Err(format!(
                        "generation {generation}: {e}. The stage stopped before writing anything \
                         (checkpoint, train.csv rows, progress), so it is not marked done. A \
                         non-finite loss comes from a damaged network ({}) or samples, or from a \
                         learning rate that diverges (train.lr = {})",
                        if generation == 0 {
                            "the seeded initial one".to_string()
                        } else {
                            self.checkpoint(generation - 1).display().to_string()
                        },
                        cfg.train.lr
                    ));
                }
            };
            acc = (
                acc.0 + l.policy,
                acc.1 + l.value,
                acc.2 + l.l2,
                acc.3 + l.total,
                acc.4 + l.grad_norm,
                acc.5 + 1,
            );
            pb.inc(1);
            pb.set_message(format!("policy {:.3} value {:.3}", l.policy, l.value));
            if (step + 1) % cfg.train.log_every == 0 || step + 1 == steps {
                let n = acc.5 as f64;
                let secs = timer.elapsed().as_secs_f64();
                rows.push(TrainRow {
                    generation,
                    step: trainer.step,
                    policy_loss: acc.0 / n,
                    value_loss: acc.1 / n,
                    l2_loss: acc.2 / n,
                    total_loss: acc.3 / n,
                    lr: l.lr,
                    grad_norm: acc.4 / n,
                    samples_per_second: n * cfg.train.batch_size as f64 / secs.max(1e-9),
                    window_samples: window.len(),
                });
                acc = (0.0, 0.0, 0.0, 0.0, 0.0, 0);
                timer = Instant::now();
            }
        }
        pb.finish_and_clear();
        let mut extra = std::collections::BTreeMap::new();
        extra.insert("generation".to_string(), generation.to_string());
        checkpoint::save(&trainer, &self.checkpoint(generation), &extra)
            .map_err(|e| io_err(&self.checkpoint(generation), e))?;
        let last = rows.last().cloned();
        append_rows(&self.dir.join("train.csv"), rows)?;
        if let Some(r) = last {
            self.log(&format!(
                "generation {generation} training: {steps} steps on {} samples{}, policy loss {:.3}, value loss {:.3}, {:.0} samples/s",
                r.window_samples,
                if expert.is_empty() {
                    String::new()
                } else {
                    format!(" ({:.0}% of each batch from {} expert samples)", 100.0 * expert_fraction, expert.len())
                },
                r.policy_loss, r.value_loss, r.samples_per_second
            ));
        }
        Ok(())
    }

    /// The trained agent's spec for generation `g`.
    pub fn agent_spec(&self, generation: u32) -> String {
        format!(
            "net:ckpt={},sims={},batch={}",
            self.checkpoint(generation).display(),
            self.config.eval.simulations,
            self.config.eval.leaves_per_tree
        )
    }

    pub fn eval_stage(
        &self,
        generation: u32,
        base_factory: &BaseFactory,
    ) -> Result<Vec<MatchSummary>, String> {
        let cfg = &self.config;
        // The evaluator waits only for searches that are running (see
        // `halatafl_nn::evaluator`), so a lone evaluation game is not slowed.
        let registry = Arc::new(NetRegistry::new(self.evaluator_config()));
        let device = cfg.run.device.clone();
        let precision = cfg.network.precision.clone();
        let factory = |spec: &str, seed: u64| -> Result<Box<dyn Agent>, SpecError> {
            if spec.starts_with("net:") {
                let mut parsed = AgentSpec::parse(spec, &halatafl_nn::agent::net_forms())?;
                parsed
                    .params
                    .entry("device".into())
                    .or_insert(device.clone());
                parsed
                    .params
                    .entry("precision".into())
                    .or_insert(precision.clone());
                halatafl_nn::build_net_agent(&parsed, seed, &registry)
            } else {
                base_factory(spec, seed)
            }
        };
        let me = self.agent_spec(generation);
        let mut summaries = Vec::new();
        for opponent in &cfg.eval.opponents {
            if opponent == "previous" && generation == 0 {
                continue;
            }
            let (name, spec) = if opponent == "previous" {
                ("previous".to_string(), self.agent_spec(generation - 1))
            } else {
                (opponent.clone(), opponent.clone())
            };
            let match_config = MatchConfig {
                games: cfg.eval.games,
                seed: self.stage_seed(generation, Stage::Eval)
                    ^ halatafl_arena::derive_seed(7, summaries.len() as u64),
                openings: cfg.eval.opening_plies,
                threads: None,
                variant: cfg.variant()?,
                budget: Default::default(),
            };
            let jobs = match_jobs(&me, &spec, &match_config, 1).map_err(|e| e.to_string())?;
            let match_config = MatchConfig {
                threads: Some(self.worker_threads(
                    jobs.len(),
                    &format!("generation {generation} evaluation vs {name}"),
                )),
                ..match_config
            };
            let pb = bar(jobs.len() as u64, &format!("eval {generation}"));
            pb.set_message(format!("vs {name}"));
            let rows = play_games(&jobs, &factory, &match_config, &|_r: &GameRow| pb.inc(1))
                .map_err(|e| e.to_string())?;
            pb.finish_and_clear();
            let summary = MatchSummary::from_match(&me, &spec, &rows);
            append_rows(
                &self.dir.join("eval.csv"),
                rows.iter()
                    .map(|r| EvalRow::new(generation, &name, r))
                    .collect(),
            )?;
            self.log(&format!("generation {generation} vs {name}:\n{summary}"));
            summaries.push(summary);
        }
        Ok(summaries)
    }
}

impl Run {
    /// How the last evaluated generation scored against each opponent, per
    /// side, with intervals (from `eval.csv`).
    pub fn final_report(&self) -> Result<String, String> {
        let rows: Vec<EvalRow> = read_rows(&self.dir.join("eval.csv"))?;
        let Some(last) = rows.iter().map(|r| r.generation).max() else {
            return Ok("no evaluation games yet".into());
        };
        let me = self.agent_spec(last);
        let mut out = format!("generation {last} ({me}):\n");
        let mut opponents: Vec<&str> = Vec::new();
        for r in rows.iter().filter(|r| r.generation == last) {
            if !opponents.contains(&r.opponent.as_str()) {
                opponents.push(&r.opponent);
            }
        }
        for name in opponents {
            let games: Vec<GameRow> = rows
                .iter()
                .filter(|r| r.generation == last && r.opponent == name)
                .map(EvalRow::game_row)
                .collect();
            let other = if games[0].foxes == me {
                games[0].geese.clone()
            } else {
                games[0].foxes.clone()
            };
            out.push_str(&format!(
                "vs {name}:\n{}\n",
                MatchSummary::from_match(&me, &other, &games)
            ));
        }
        Ok(out)
    }
}

/// UTC time as `YYYY-MM-DD HH:MM:SS` without a date crate.
fn chrono_like_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = secs / 86_400;
    let (h, m, s) = ((secs % 86_400) / 3600, (secs % 3600) / 60, secs % 60);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (mo <= 2) as i64;
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02}:{s:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::StoredSample;
    use halatafl_nn::TrainConfig;
    use halatafl_rules::{Game, Variant};

    /// A fresh run directory with a tiny network that starts from scratch.
    fn scratch_run(name: &str) -> Run {
        let dir = std::env::temp_dir().join(format!("halatafl-run-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut config = RunConfig::default();
        config.network.preset = "b1c16".into();
        config.bootstrap.games = 0;
        config.train.batch_size = 8;
        config.train.steps_per_generation = 2;
        config.run.threads = 1;
        config.run.torch_threads = 1;
        Run::create(&dir, config, "test").unwrap()
    }

    fn no_agents(spec: &str, _seed: u64) -> Result<Box<dyn Agent>, SpecError> {
        panic!("no agent should be built, asked for {spec}")
    }

    #[test]
    fn a_run_without_progress_but_with_completed_work_is_refused() {
        let run = scratch_run("noprogress");
        // What a run stopped inside its first stage leaves is fine: the seeded
        // initial network and the first self-play's shards and row.
        std::fs::write(run.checkpoint(0), b"initial").unwrap();
        std::fs::create_dir_all(run.shard_dir(1)).unwrap();
        append_rows(
            &run.dir.join("selfplay.csv"),
            vec![SelfPlayRow {
                generation: 1,
                ..SelfPlayRow::default()
            }],
        )
        .unwrap();
        run.refuse_completed_work_without_progress().unwrap();
        // Later work without progress.json is refused, by name, and kept.
        std::fs::write(run.checkpoint(1), b"generation 1").unwrap();
        std::fs::create_dir_all(run.shard_dir(2)).unwrap();
        append_rows(&run.dir.join("train.csv"), vec![TrainRow::default()]).unwrap();
        let train_csv = std::fs::read(run.dir.join("train.csv")).unwrap();
        let err = run.execute(&no_agents).unwrap_err();
        assert!(
            err.contains("no progress.json")
                && err.contains("checkpoints/gen_0001.safetensors")
                && !err.contains("gen_0000.safetensors")
                && err.contains("shards/gen_0002")
                && err.contains("train.csv rows")
                && !err.contains("eval.csv"),
            "{err}"
        );
        assert_eq!(std::fs::read(run.checkpoint(1)).unwrap(), b"generation 1");
        assert_eq!(std::fs::read(run.checkpoint(0)).unwrap(), b"initial");
        assert!(run.shard_dir(1).exists() && run.shard_dir(2).exists());
        assert_eq!(std::fs::read(run.dir.join("train.csv")).unwrap(), train_csv);
        std::fs::remove_dir_all(&run.dir).ok();
    }

    #[test]
    fn a_garbage_csv_is_refused_not_replaced() {
        let run = scratch_run("garbage");
        let path = run.dir.join("selfplay.csv");
        std::fs::write(&path, "not a csv of this run\n").unwrap();
        run.mark(1, Stage::Eval).unwrap();
        let err = run.execute(&no_agents).unwrap_err();
        assert!(
            err.contains("selfplay.csv, line 1") && err.contains("generation"),
            "{err}"
        );
        assert!(!run.shard_dir(2).exists(), "no stage ran");
        let err = append_rows(&path, vec![SelfPlayRow::default()]).unwrap_err();
        assert!(err.contains("selfplay.csv, line 1"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "not a csv of this run\n"
        );
        std::fs::remove_dir_all(&run.dir).ok();
    }

    #[test]
    fn a_non_finite_loss_stops_training_before_anything_is_written() {
        let run = scratch_run("nanloss");
        // A checkpoint that loads (finite values, valid checksum) but whose
        // value head drives a logit to -inf: the value loss is not finite.
        let trainer = Trainer::new(
            run.config.net_config().unwrap(),
            TrainConfig::default(),
            tch::Device::Cpu,
            1,
        );
        let bias = trainer.net.value_out.bs.as_ref().unwrap();
        tch::no_grad(|| {
            bias.shallow_clone()
                .copy_(&tch::Tensor::from_slice(&[3e38f32, 0.0, -3e38]))
        });
        checkpoint::save(&trainer, &run.checkpoint(0), &Default::default()).unwrap();
        let mut game = Game::start_of(Variant::two_foxes());
        let mut samples = Vec::new();
        for _ in 0..6 {
            let moves = game.position().legal_moves();
            samples.push(StoredSample {
                sample: Sample {
                    position: *game.position(),
                    repetitions: 1,
                    policy: vec![1.0 / moves.len() as f32; moves.len()],
                    wdl: [0.0, 1.0, 0.0],
                },
                search_wdl: [0.0, 1.0, 0.0],
            });
            game.play_unchecked(moves[0]);
        }
        std::fs::create_dir_all(run.shard_dir(1)).unwrap();
        write_shard(&run.shard_dir(1).join("w00_0000.shard"), &samples, 1, 1).unwrap();
        run.mark(1, Stage::SelfPlay).unwrap();

        let err = run.execute(&no_agents).unwrap_err();
        assert!(
            err.contains("generation 1: training step 1: the value loss is")
                && err.contains("not marked done"),
            "{err}"
        );
        assert!(!run.checkpoint(1).exists());
        assert!(!run.dir.join("train.csv").exists());
        assert_eq!(
            run.progress().unwrap(),
            Some(Progress {
                generation: 1,
                stage: Stage::SelfPlay
            })
        );
        std::fs::remove_dir_all(&run.dir).ok();
    }
}
