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
//!                                      (asynchronous workers: w<ID>-<seq>.shard)
//!   selfplay.csv  train.csv  eval.csv
//!   accuracy.csv       error rates on `[eval] suite`, when it names one
//!   async.json  finished.json  learner-pending.json   asynchronous mode only
//!   locks/             one lock file per running stage (`train`, the learner, ...)
//! ```
//!
//! `halatafl train` runs the stages in turn ([`Run::execute`]). The
//! asynchronous mode runs them as processes on one directory: `train
//! --init-only` ([`Run::init_async`]) makes generation 0 in turn, then
//! [`Run::run_selfplay_worker`], [`Run::run_learner`] and
//! [`Run::run_evaluator`] take over (see [`crate::selfplay_stage`],
//! [`crate::learn_stage`], [`crate::eval_stage`]).
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
use crate::error::{at, TrainError};
use halatafl_dataio::run_rows::retain_rows;
use halatafl_dataio::write_atomically;
pub use halatafl_dataio::{read_csv_rows, AccuracyRow, CsvError, EvalRow, SelfPlayRow, TrainRow};
use halatafl_nn::{EvaluatorConfig, Trainer};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Marks a run prepared for the asynchronous stages (`--init-only`).
pub const ASYNC_MARKER: &str = "async.json";
/// Written by the learner once it has published the last generation: the
/// self-play workers then stop, and the evaluator once it has evaluated
/// every due checkpoint.
pub const FINISHED_MARKER: &str = "finished.json";

/// How long a temporary file of a process that has ended stays untouched
/// before [`Run::clean_stale_temps`] removes it.
pub const STALE_TEMP_SECONDS: u64 = 60;

pub use crate::selfplay::BaseFactory;

/// The stages of one generation, in the order they run (and compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Self-play games with the previous checkpoint (in generation 0, the
    /// expert's games of the bootstrap), written as shards.
    SelfPlay,
    /// Training the generation's checkpoint on the replay window.
    Train,
    /// Evaluation matches of the new checkpoint (only when due).
    Eval,
}

/// `progress.json`: the last stage a run completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// The generation of that stage.
    pub generation: u32,
    /// The stage completed.
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

/// A training run: its directory and its config (the one the directory's
/// `config.toml` holds).
pub struct Run {
    /// The run directory every stage reads and writes.
    pub dir: PathBuf,
    /// The run's config.
    pub config: RunConfig,
    /// The inference precision this process settled on: `network.precision`,
    /// or what its `auto` trial chose the first time a network was loaded,
    /// kept so that every later generation of the process runs the same.
    pub(crate) settled_precision: std::sync::OnceLock<halatafl_nn::Precision>,
    /// Set once the process has logged how self-play's inference servers
    /// are laid out.
    pub(crate) servers_logged: std::sync::OnceLock<()>,
}

/// The git revision this binary was built from, `-dirty` if it had
/// uncommitted changes, `unknown` outside a git checkout (see build.rs).
pub const BUILD_REVISION: &str = env!("HALATAFL_BUILD_REVISION");

pub(crate) fn bar(len: u64, what: &str) -> ProgressBar {
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
    /// Generation `generation`'s checkpoint file,
    /// `checkpoints/gen_NNNN.safetensors`.
    pub fn checkpoint(&self, generation: u32) -> PathBuf {
        self.dir
            .join("checkpoints")
            .join(format!("gen_{generation:04}.safetensors"))
    }

    /// The folder of generation `generation`'s sample shards,
    /// `shards/gen_NNNN`.
    pub fn shard_dir(&self, generation: u32) -> PathBuf {
        self.dir.join("shards").join(format!("gen_{generation:04}"))
    }

    /// Appends `line` to `log.txt` and prints it on standard error.
    pub fn log(&self, line: &str) {
        self.log_file_only(line);
        eprintln!("{line}");
    }

    /// Appends `line` to `log.txt` only (what is too long for the console).
    pub fn log_file_only(&self, line: &str) {
        let path = self.dir.join("log.txt");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            let _ = writeln!(f, "[{}] {line}", chrono_like_now());
        }
    }

    /// Creates a new run directory (refuses one that already holds a run).
    pub fn create(dir: &Path, config: RunConfig, command: &str) -> Result<Run, TrainError> {
        if dir.join(ASYNC_MARKER).exists() {
            let d = dir.display();
            return Err(TrainError::Refused(format!(
                "{d} already holds an asynchronous run: drive it with `halatafl stage selfplay --run {d} \
                 --worker ID`, `halatafl stage learn --run {d}` and `halatafl stage evaluate --run {d}`, or \
                 start a new run in another directory"
            )));
        }
        if dir.join("progress.json").exists() || dir.join("config.toml").exists() {
            return Err(TrainError::Refused(format!(
                "{} already holds a run: use `halatafl train --resume {}`",
                dir.display(),
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir.join("checkpoints")).map_err(at(dir))?;
        std::fs::create_dir_all(dir.join("shards")).map_err(at(dir))?;
        let run = Run {
            dir: dir.to_path_buf(),
            config,
            settled_precision: Default::default(),
            servers_logged: Default::default(),
        };
        write_atomically(&dir.join("config.toml"), run.config.to_toml().as_bytes())
            .map_err(at(dir))?;
        let info = serde_json::json!({
            "git_revision": BUILD_REVISION,
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
        .map_err(at(dir))?;
        Ok(run)
    }

    /// Opens an existing run to resume it, removing the temporary files
    /// that killed processes left (see [`Run::clean_stale_temps`]).
    pub fn open(dir: &Path) -> Result<Run, TrainError> {
        let config = RunConfig::load(&dir.join("config.toml")).map_err(TrainError::ConfigFile)?;
        let run = Run {
            dir: dir.to_path_buf(),
            config,
            settled_precision: Default::default(),
            servers_logged: Default::default(),
        };
        run.clean_stale_temps()?;
        Ok(run)
    }

    /// Removes temporary files (`.gen_0007.safetensors.tmp-PID`,
    /// `.train.csv.tmpPID`, ...) that a process killed, or stopped by a full
    /// disk, left in the run's folders, and logs each. A file is stale when
    /// its process is gone and it has not changed for
    /// [`STALE_TEMP_SECONDS`]: the age guards the temporary files of live
    /// writers on other machines sharing the directory, whose process ids
    /// mean nothing here (a write takes seconds at most).
    pub fn clean_stale_temps(&self) -> Result<(), TrainError> {
        let mut folders = vec![
            self.dir.clone(),
            self.dir.join("checkpoints"),
            self.dir.join("report"),
        ];
        let shards = self.dir.join("shards");
        if let Ok(entries) = std::fs::read_dir(&shards) {
            folders.extend(
                entries
                    .filter_map(|e| e.ok())
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
        }
        let now = std::time::SystemTime::now();
        for folder in folders {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.filter_map(|e| e.ok()) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(pid) = halatafl_dataio::temp_file_pid(&name) else {
                    continue;
                };
                let Ok(meta) = entry.metadata() else { continue };
                let age = meta
                    .modified()
                    .ok()
                    .and_then(|m| now.duration_since(m).ok())
                    .unwrap_or_default();
                // A live process, this one included, has its /proc entry.
                if !meta.is_file()
                    || Path::new(&format!("/proc/{pid}")).exists()
                    || age.as_secs() < STALE_TEMP_SECONDS
                {
                    continue;
                }
                let path = entry.path();
                match std::fs::remove_file(&path) {
                    Ok(()) => self.log(&format!(
                        "removed {}: a temporary file left by process {pid}, which has ended",
                        path.display()
                    )),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(TrainError::io(&path, e)),
                }
            }
        }
        Ok(())
    }

    /// Refuses, before anything is written or logged, to resume a run that
    /// `train --resume` cannot carry on: an asynchronous run (unless
    /// `init_only` finishes its generation 0), a damaged CSV, or a run
    /// without `progress.json` that holds completed work.
    pub fn check_resumable(&self, init_only: bool) -> Result<(), TrainError> {
        if self.is_async() && !init_only {
            return Err(self.async_refusal());
        }
        self.check_files().map(|_| ())
    }

    /// Refuses a damaged CSV here, before any stage, rather than when a
    /// stage appends to it (or, before, replaced it), and a run without
    /// `progress.json` that holds completed work; returns the progress.
    fn check_files(&self) -> Result<Option<Progress>, TrainError> {
        read_csv_rows::<SelfPlayRow>(&self.dir.join("selfplay.csv"))?;
        read_csv_rows::<TrainRow>(&self.dir.join("train.csv"))?;
        read_csv_rows::<EvalRow>(&self.dir.join("eval.csv"))?;
        read_csv_rows::<AccuracyRow>(&self.dir.join("accuracy.csv"))?;
        let progress = self.progress()?;
        if progress.is_none() {
            self.refuse_completed_work_without_progress()?;
        }
        Ok(progress)
    }

    fn async_refusal(&self) -> TrainError {
        TrainError::Refused(format!(
            "{} is an asynchronous run ({ASYNC_MARKER} exists): its stages are the \
             `halatafl stage selfplay`, `learn` and `evaluate` processes, which `train --resume` \
             would collide with",
            self.dir.display()
        ))
    }

    /// Changes how many generations the run goes to, so a finished run can
    /// train longer (`halatafl train --resume DIR --generations N`). Completed
    /// generations stay as they are; the learning-rate schedule is recomputed
    /// over the new total, so from the next training step on the rate follows
    /// the longer schedule (a cosine run's rate rises from `min_lr` to where
    /// the longer curve is: a warm restart). An extended run therefore differs
    /// from one configured for N generations from the start; `run.json` and
    /// the log record every change.
    pub fn set_generations(&mut self, generations: u32, command: &str) -> Result<(), TrainError> {
        let old = self.config.run.generations;
        if generations == old {
            return Ok(());
        }
        if self.is_async() {
            // Its running workers, learner and evaluator read the count
            // from config.toml; changing it under them (or below what the
            // learner has published, which progress.json does not record
            // in this mode) would stop them with false messages.
            return Err(TrainError::Refused(format!(
                "--generations {generations}: {} is an asynchronous run, whose stages read \
                 [run] generations ({old}) while they run; nothing was changed",
                self.dir.display()
            )));
        }
        // A checkpoint proves its generation was trained even where
        // progress.json lags behind it.
        let reached = self
            .progress()?
            .map_or(0, |p| p.generation)
            .max(self.newest_checkpoint()?.unwrap_or(0));
        if generations < reached {
            return Err(TrainError::Refused(format!(
                "--generations {generations}: {} has reached generation {reached}; \
                 a run can be extended or shortened to a count from {} up",
                self.dir.display(),
                reached.max(1)
            )));
        }
        let mut config = self.config.clone();
        config.run.generations = generations;
        config.validate()?;
        let info_path = self.dir.join("run.json");
        let mut info: serde_json::Value = match std::fs::read_to_string(&info_path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| TrainError::BadFile {
                path: info_path.clone(),
                why: format!("unreadable run file: {e}"),
            })?,
            Err(_) => serde_json::json!({}),
        };
        let change = serde_json::json!({
            "from": old,
            "to": generations,
            "after_generation": reached,
            "at": chrono_like_now(),
            "git_revision": BUILD_REVISION,
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
        .map_err(at(&info_path))?;
        let config_path = self.dir.join("config.toml");
        write_atomically(&config_path, config.to_toml().as_bytes()).map_err(at(&config_path))?;
        self.config = config;
        self.log(&format!(
            "generations {old} -> {generations} (after generation {reached}); \
             the learning-rate schedule now spans {generations} generations"
        ));
        Ok(())
    }

    /// The last completed stage from `progress.json`; `None` when the file
    /// does not exist (nothing completed yet).
    pub fn progress(&self) -> Result<Option<Progress>, TrainError> {
        let path = self.dir.join("progress.json");
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(at(&path))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| TrainError::BadFile {
                path: path.clone(),
                why: format!("unreadable progress file: {e}"),
            })
    }

    fn mark(&self, generation: u32, stage: Stage) -> Result<(), TrainError> {
        let path = self.dir.join("progress.json");
        let text = serde_json::to_string(&Progress { generation, stage }).expect("json");
        write_atomically(&path, text.as_bytes()).map_err(at(&path))
    }

    /// Removes what a stage that did not finish may have left.
    fn clean_unfinished(&self, generation: u32, stage: Stage) -> Result<(), TrainError> {
        let earlier = |g| g < generation;
        match stage {
            Stage::SelfPlay => {
                let dir = self.shard_dir(generation);
                if dir.exists() {
                    std::fs::remove_dir_all(&dir).map_err(at(&dir))?;
                }
                retain_rows::<SelfPlayRow>(&self.dir.join("selfplay.csv"), earlier)?
            }
            Stage::Train => retain_rows::<TrainRow>(&self.dir.join("train.csv"), earlier)?,
            Stage::Eval => {
                retain_rows::<EvalRow>(&self.dir.join("eval.csv"), earlier)?;
                retain_rows::<AccuracyRow>(&self.dir.join("accuracy.csv"), earlier)?
            }
        }
        Ok(())
    }

    pub(crate) fn stage_seed(&self, generation: u32, stage: Stage) -> u64 {
        halatafl_arena::derive_seed(
            self.config.run.seed,
            (generation as u64) << 8 | stage as u64,
        )
    }

    pub(crate) fn evaluator_config(&self) -> EvaluatorConfig {
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
    pub fn execute(&self, base_factory: &BaseFactory) -> Result<(), TrainError> {
        if self.is_async() {
            return Err(self.async_refusal());
        }
        self.execute_through(base_factory, self.config.run.generations)
    }

    /// Runs (or resumes) the stages of generations up to `last`.
    fn execute_through(&self, base_factory: &BaseFactory, last: u32) -> Result<(), TrainError> {
        let progress = self.check_files()?;
        halatafl_nn::set_threads(self.config.run.torch_threads);
        // With an expert, generation 0 is made by the run's first stages
        // (a bad expert spec fails there at once).
        let bootstrap = self.config.bootstrap.enabled();
        if !bootstrap && !self.checkpoint(0).exists() {
            // `network.init`'s weights keep the config's shape: a moves-left
            // head the config asks for and the checkpoint lacks is added,
            // seeded, when generation 1 trains.
            let init = &self.config.network.init;
            let trainer = match init.as_str() {
                "" => self.initial_trainer(tch::Device::Cpu)?,
                path => {
                    let expected = Some(self.config.net_config()?);
                    halatafl_nn::checkpoint::load(Path::new(path), expected, tch::Device::Cpu)?.0
                }
            };
            self.save_checkpoint(&trainer, 0)?;
            let net = trainer.net.config;
            self.log(&match init.as_str() {
                "" => format!("generation 0: initial {net} network written"),
                path => format!("generation 0: the {net} network of {path} (network.init)"),
            });
        }
        let (mut generation, mut stage) = match progress {
            None if bootstrap => (0, Stage::SelfPlay),
            None => (1, Stage::SelfPlay),
            Some(p) => p.next(),
        };
        while generation <= last {
            self.clean_unfinished(generation, stage)?;
            match stage {
                Stage::SelfPlay if generation == 0 => {
                    self.bootstrap_stage(base_factory)?;
                }
                Stage::SelfPlay => {
                    self.selfplay_stage(generation, base_factory)?;
                }
                Stage::Train => self.train_stage(generation)?,
                Stage::Eval => {
                    if self.evaluation_due(generation) {
                        self.eval_stage(generation, base_factory)?;
                    }
                }
            }
            self.mark(generation, stage)?;
            (generation, stage) = Progress { generation, stage }.next();
        }
        Ok(())
    }

    /// Whether generation `generation` is evaluated: every `eval.every`-th
    /// and the last.
    pub fn evaluation_due(&self, generation: u32) -> bool {
        generation == self.config.run.generations
            || generation.is_multiple_of(self.config.eval.every)
    }

    /// Prepares the run for the asynchronous stages: runs generation 0 in
    /// turn (the expert's games, the first checkpoint, its evaluation; or the
    /// seeded network alone), or finishes it after a crash, then writes
    /// [`ASYNC_MARKER`]. From then on `halatafl train --resume` refuses the
    /// run and `selfplay`, `learn` and `evaluate` accept it.
    pub fn init_async(&self, base_factory: &BaseFactory) -> Result<(), TrainError> {
        self.execute_through(base_factory, 0)?;
        if !self.is_async() {
            let path = self.dir.join(ASYNC_MARKER);
            let info = serde_json::json!({ "from_generation": 1, "at": chrono_like_now() });
            write_atomically(&path, info.to_string().as_bytes()).map_err(at(&path))?;
            self.log("generation 0 done: the run is ready for `halatafl stage selfplay`, `learn` and `evaluate`");
        }
        Ok(())
    }

    /// Whether the run is driven by the asynchronous stages.
    pub fn is_async(&self) -> bool {
        self.dir.join(ASYNC_MARKER).exists()
    }

    /// Refuses a run that `--init-only` has not prepared.
    pub(crate) fn require_async(&self) -> Result<(), TrainError> {
        if self.is_async() {
            return Ok(());
        }
        Err(TrainError::Refused(format!(
            "{dir} is not prepared for the asynchronous stages (no {ASYNC_MARKER}): make it with \
             `halatafl train --config FILE --run {dir} --init-only` (or finish an interrupted \
             one with `halatafl train --resume {dir} --init-only`)",
            dir = self.dir.display()
        )))
    }

    /// Whether the learner has published the last generation.
    pub fn is_finished(&self) -> bool {
        self.dir.join(FINISHED_MARKER).exists()
    }

    /// The highest generation with a checkpoint (hidden temporary files are
    /// not checkpoints), if any.
    pub fn newest_checkpoint(&self) -> Result<Option<u32>, TrainError> {
        let dir = self.dir.join("checkpoints");
        let entries = std::fs::read_dir(&dir).map_err(at(&dir))?;
        Ok(entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_prefix("gen_")?
                    .strip_suffix(".safetensors")?
                    .parse::<u32>()
                    .ok()
            })
            .max())
    }

    /// Takes the lock `locks/<name>.lock` for this process's lifetime (the
    /// system releases it when the process ends, even by `kill -9`), or
    /// refuses when another process holds it: two learners (or two workers
    /// of one id) on one run would write the same files.
    pub fn exclusive(&self, name: &str, what: &str) -> Result<std::fs::File, TrainError> {
        let dir = self.dir.join("locks");
        std::fs::create_dir_all(&dir).map_err(at(&dir))?;
        let path = dir.join(format!("{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(at(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => Err(TrainError::Refused(format!(
                "{what} is already running on {} ({} is locked)",
                self.dir.display(),
                path.display()
            ))),
            Err(std::fs::TryLockError::Error(e)) => Err(TrainError::io(&path, e)),
        }
    }

    /// Sleeps `async.poll_seconds`.
    pub(crate) fn poll_pause(&self) {
        std::thread::sleep(std::time::Duration::from_secs_f64(
            self.config.asynchronous.poll_seconds,
        ));
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
    pub(crate) fn refuse_completed_work_without_progress(&self) -> Result<(), TrainError> {
        let first = self.first_generation();
        let names_in =
            |dir: &Path, keep: &dyn Fn(&str) -> bool| -> Result<Vec<String>, TrainError> {
                if !dir.exists() {
                    return Ok(Vec::new());
                }
                let mut names: Vec<String> = std::fs::read_dir(dir)
                    .map_err(at(dir))?
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
        let later_selfplay = read_csv_rows::<SelfPlayRow>(&self.dir.join("selfplay.csv"))?
            .iter()
            .any(|r| r.generation != first);
        if later_selfplay {
            found.push(format!("selfplay.csv rows after generation {first}"));
        }
        if !read_csv_rows::<TrainRow>(&self.dir.join("train.csv"))?.is_empty() {
            found.push("train.csv rows".into());
        }
        if !read_csv_rows::<EvalRow>(&self.dir.join("eval.csv"))?.is_empty() {
            found.push("eval.csv rows".into());
        }
        if found.is_empty() {
            return Ok(());
        }
        Err(TrainError::Refused(format!(
            "{dir} has no progress.json but holds completed work: {}. Resuming would start the run \
             over and overwrite it, so nothing was done. Restore {dir}/progress.json (it names the \
             last completed stage, e.g. {{\"generation\":2,\"stage\":\"eval\"}}; log.txt lists \
             the stages that ended), or start a new run in another directory.",
            found.join("; "),
            dir = self.dir.display()
        )))
    }

    /// `run.threads`, but no more than the stage has games: a worker without
    /// a game would only idle. Logged when it caps.
    pub(crate) fn worker_threads(&self, games: usize, stage: &str) -> usize {
        let threads = self.config.run.threads;
        let used = threads.min(games).max(1);
        if used < threads {
            self.log(&format!(
                "{stage}: {used} worker threads for {games} games (run.threads = {threads})"
            ));
        }
        used
    }

    /// Inference precision of self-play and evaluation: the one this
    /// process settled on, else `network.precision` (possibly `auto`).
    pub(crate) fn precision(&self) -> Result<halatafl_nn::PrecisionChoice, TrainError> {
        if let Some(p) = self.settled_precision.get() {
            return Ok((*p).into());
        }
        let text = &self.config.network.precision;
        text.parse().map_err(|why| {
            TrainError::Config(crate::config::ConfigError {
                key: "network.precision",
                value: format!("{text:?}"),
                expected: why,
            })
        })
    }

    /// The seeded, untrained network every run starts from.
    pub(crate) fn initial_trainer(&self, device: tch::Device) -> Result<Trainer, TrainError> {
        Ok(Trainer::new(
            self.config.net_config()?,
            self.config.train_config()?,
            device,
            self.config.run.seed,
        ))
    }
}

/// UTC time as `YYYY-MM-DD HH:MM:SS` without a date crate.
pub(crate) fn chrono_like_now() -> String {
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
    use crate::shard::{write_shard, StoredSample};
    use halatafl_agent::{Agent, SpecError};
    use halatafl_dataio::run_rows::append_rows;
    use halatafl_nn::checkpoint;
    use halatafl_nn::TrainConfig;
    use halatafl_nn::{AuxTarget, PerTarget, Sample, Trainer};
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
    fn run_json_names_the_revision_the_binary_was_built_from() {
        let run = scratch_run("revision");
        let text = std::fs::read_to_string(run.dir.join("run.json")).unwrap();
        let info: serde_json::Value = serde_json::from_str(&text).unwrap();
        let revision = info["git_revision"].as_str().unwrap();
        assert_eq!(revision, BUILD_REVISION);
        let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.git");
        if !checkout.exists() {
            assert_eq!(revision, "unknown");
            return;
        }
        let hash = revision.strip_suffix("-dirty").unwrap_or(revision);
        assert_eq!(hash.len(), 40, "{revision}");
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()), "{revision}");
        let _ = std::fs::remove_dir_all(&run.dir);
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
        let err = run.execute(&no_agents).unwrap_err().to_string();
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
        let err = run.execute(&no_agents).unwrap_err().to_string();
        assert!(
            err.contains("selfplay.csv, line 1") && err.contains("generation"),
            "{err}"
        );
        assert!(!run.shard_dir(2).exists(), "no stage ran");
        let err = append_rows(&path, vec![SelfPlayRow::default()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("selfplay.csv, line 1"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "not a csv of this run\n"
        );
        std::fs::remove_dir_all(&run.dir).ok();
    }

    /// `n` consecutive positions of a game from the start, as stored samples
    /// with plies left counting down to 1 (`counted`) or unknown.
    fn game_samples(n: usize, counted: bool) -> Vec<StoredSample> {
        let mut game = Game::start_of(Variant::two_foxes());
        let mut samples = Vec::new();
        for i in 0..n {
            let moves = game.position().legal_moves();
            samples.push(StoredSample {
                sample: Sample {
                    position: *game.position(),
                    repetitions: 1,
                    policy: vec![1.0 / moves.len() as f32; moves.len()],
                    wdl: [0.0, 1.0, 0.0],
                    aux: PerTarget::from_fn(|_| counted.then_some((n - i) as f32)),
                },
                search_wdl: [0.0, 1.0, 0.0],
            });
            game.play_unchecked(moves[0]);
        }
        samples
    }

    #[test]
    fn the_evaluation_agent_searches_as_the_run_does() {
        let mut run = scratch_run("evalspec");
        let spec = |run: &Run| {
            let parsed = halatafl_agent::AgentSpec::parse(&run.agent_spec(1), "").unwrap();
            halatafl_mcts::from_spec(&parsed, &["ckpt"]).unwrap().config
        };
        let plain = spec(&run);
        assert_eq!(plain.root, halatafl_mcts::RootMode::Puct);
        assert_eq!((plain.sims, plain.batch_size), (64, 4));
        assert!(
            run.agent_spec(1).ends_with(",sims=64,batch=4"),
            "{}",
            run.agent_spec(1)
        );
        // configs/experiments/gumbel.toml's kind of run: evaluated with its own search.
        run.config.search.algorithm = "gumbel".into();
        run.config.search.c_puct = 2.0;
        run.config.search.fpu_reduction = 0.5;
        run.config.search.gumbel_m = 4;
        let searched = spec(&run);
        assert_eq!(searched.root, halatafl_mcts::RootMode::Gumbel);
        assert_eq!(
            (searched.cpuct, searched.fpu_reduction, searched.gumbel_m),
            (2.0, 0.5, 4)
        );
        // Played for strength: no noise, no temperature.
        assert!(!searched.noise && searched.temperature_plies == 0);
        std::fs::remove_dir_all(&run.dir).ok();
    }

    #[test]
    fn damaged_and_foreign_shards_are_set_aside_and_the_rest_is_read() {
        let run = scratch_run("shards-aside");
        let dir = run.shard_dir(1);
        std::fs::create_dir_all(&dir).unwrap();
        let good = game_samples(5, true);
        write_shard(&dir.join("w0-000001.shard"), &good, 1, 1, None).unwrap();
        // Damaged: a flipped byte. Foreign: another generation's shard,
        // a file that is no shard at all, a directory named like one.
        write_shard(&dir.join("w0-000002.shard"), &good, 1, 1, None).unwrap();
        let mut bytes = std::fs::read(dir.join("w0-000002.shard")).unwrap();
        bytes[20] ^= 1;
        std::fs::write(dir.join("w0-000002.shard"), bytes).unwrap();
        write_shard(&dir.join("w0-000003.shard"), &good, 7, 1, None).unwrap();
        std::fs::write(dir.join("w1-000001.shard"), b"not a shard").unwrap();
        std::fs::create_dir_all(dir.join("w2-000001.shard")).unwrap();
        let samples = run.generation_samples(1).unwrap();
        assert_eq!(samples.len(), good.len(), "the intact shard is read");
        let mut counts = crate::learn_stage::SampleCounts::default();
        assert_eq!(counts.refresh(&run).unwrap().get(&1), Some(&5));
        for name in ["w0-000002", "w0-000003", "w1-000001", "w2-000001"] {
            assert!(!dir.join(format!("{name}.shard")).exists(), "{name}");
            assert!(
                dir.join(format!("{name}.shard.rejected")).exists(),
                "{name}"
            );
        }
        let log = std::fs::read_to_string(run.dir.join("log.txt")).unwrap();
        assert!(
            log.contains("w0-000002.shard: checksum mismatch")
                && log.contains("written for generation 7, found among generation 1's")
                && log.contains("w1-000001.shard: not a halatafl sample shard")
                && log.contains("w2-000001.shard: not a regular file"),
            "{log}"
        );
        std::fs::remove_dir_all(&run.dir).ok();
    }

    #[test]
    fn turning_the_moves_left_head_on_adds_a_fresh_one_and_turning_it_off_is_refused() {
        let mut run = scratch_run("movesleft");
        // Generation 0 without the head, as every run before it had.
        let trainer = run.initial_trainer(tch::Device::Cpu).unwrap();
        assert!(trainer.net.aux_head(AuxTarget::MovesLeft).is_none());
        checkpoint::save(&trainer, &run.checkpoint(0), &Default::default()).unwrap();
        std::fs::create_dir_all(run.shard_dir(1)).unwrap();
        write_shard(
            &run.shard_dir(1).join("w00_0000.shard"),
            &game_samples(12, true),
            1,
            1,
            None,
        )
        .unwrap();
        // Resumed with the head on: generation 1 trains a fresh one, says so.
        run.config.network.moves_left_head = true;
        run.config.train.moves_left_weight = 0.5;
        run.config.validate().unwrap();
        run.train_stage(1).unwrap();
        let info = checkpoint::info(&run.checkpoint(1)).unwrap();
        assert!(info.net.heads.has(AuxTarget::MovesLeft));
        assert_eq!(info.train.aux_weights[AuxTarget::MovesLeft], 0.5);
        let log = std::fs::read_to_string(run.dir.join("log.txt")).unwrap();
        assert!(
            log.contains("gen_0000.safetensors has no moves-left head")
                && log.contains("freshly initialised"),
            "{log}"
        );
        assert!(log.contains("moves-left loss"), "{log}");
        // Its trained agent searches with the utility; the one before, without the head, cannot.
        run.config.search.moves_left_utility = 0.05;
        assert!(
            run.agent_spec(1).ends_with(",moves_left=0.05"),
            "{}",
            run.agent_spec(1)
        );
        assert!(!run.agent_spec(0).contains("moves_left"));
        // Turned off again: refused, not dropped.
        run.config.network.moves_left_head = false;
        run.config.train.moves_left_weight = 0.0;
        let err = run.train_generation(2).err().expect("refused").to_string();
        assert!(
            err.contains("has a moves-left head but network.moves_left_head = false"),
            "{err}"
        );
        std::fs::remove_dir_all(&run.dir).ok();
    }

    #[test]
    fn network_init_makes_generation_0_the_given_checkpoint() {
        let mut run = scratch_run("init");
        // A network of another seed than the run's, so it cannot be the run's own.
        let given = Trainer::new(
            run.config.net_config().unwrap(),
            TrainConfig::default(),
            tch::Device::Cpu,
            run.config.run.seed + 41,
        );
        let path = run.dir.join("given.safetensors");
        checkpoint::save(&given, &path, &Default::default()).unwrap();
        run.config.network.init = path.display().to_string();
        run.config.validate().unwrap();
        run.execute_through(&no_agents, 0).unwrap();
        let (generation0, _) =
            checkpoint::load(&run.checkpoint(0), None, tch::Device::Cpu).unwrap();
        let weights = given.vs.variables();
        let seeded = run
            .initial_trainer(tch::Device::Cpu)
            .unwrap()
            .vs
            .variables();
        let mut differ_from_seeded = 0;
        for (name, var) in generation0.vs.variables() {
            assert!(
                var.equal(&weights[&name]),
                "{name} is not the given network's"
            );
            differ_from_seeded += !var.equal(&seeded[&name]) as usize;
        }
        assert!(
            differ_from_seeded > 0,
            "the given network is the seeded one"
        );
        let log = std::fs::read_to_string(run.dir.join("log.txt")).unwrap();
        assert!(log.contains("given.safetensors (network.init)"), "{log}");
        std::fs::remove_dir_all(&run.dir).ok();

        // A checkpoint of another shape is refused, naming both, and no
        // generation 0 is written.
        let mut run = scratch_run("init-shape");
        let other = Trainer::new(
            halatafl_nn::NetConfig::preset(2, 16),
            TrainConfig::default(),
            tch::Device::Cpu,
            1,
        );
        let path = run.dir.join("other.safetensors");
        checkpoint::save(&other, &path, &Default::default()).unwrap();
        run.config.network.init = path.display().to_string();
        let err = run.execute_through(&no_agents, 0).unwrap_err().to_string();
        assert!(
            err.contains("other.safetensors") && err.contains("expected b1c16"),
            "{err}"
        );
        assert!(!run.checkpoint(0).exists());
        // With an expert, generation 0 cannot also be a given network.
        run.config.bootstrap.games = 10;
        let err = run.config.validate().unwrap_err().to_string();
        assert!(
            err.contains("network.init") && err.contains("bootstrap.games = 0"),
            "{err}"
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
        let samples = game_samples(6, false);
        std::fs::create_dir_all(run.shard_dir(1)).unwrap();
        write_shard(
            &run.shard_dir(1).join("w00_0000.shard"),
            &samples,
            1,
            1,
            None,
        )
        .unwrap();
        run.mark(1, Stage::SelfPlay).unwrap();

        let err = run.execute(&no_agents).unwrap_err().to_string();
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
