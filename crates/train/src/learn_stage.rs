//! Training: checkpoint g from checkpoint g-1 on the replay window (the
//! shards of generations g-W+1 ..= g, W = `replay.window_generations`, plus a
//! share of the expert's samples in the first generations). In turn
//! ([`Run::train_stage`]) for `halatafl train`, or as the asynchronous
//! learner ([`Run::run_learner`], `halatafl stage learn --run DIR`).
//!
//! The learner trains checkpoints from the newest one it finds up to
//! `run.generations`, each with `train.steps_per_generation` steps on the
//! replay window as it is when it starts (the same sampling, seeds and
//! trainer as `halatafl train`). Before checkpoint g it waits (sleeping
//! `async.poll_seconds` between looks) until the self-play shards of
//! generations 1 on hold `g x steps x batch_size / async.train_ratio`
//! samples and the window holds some ([`learner_may_train`]): training never
//! runs more than `train_ratio` samples ahead of self-play.
//!
//! Publishing checkpoint g is exact under `kill -9`: the learner writes its
//! train.csv rows and generation g's selfplay.csv row to
//! `learner-pending.json`, then the checkpoint (the commit point), then
//! replaces generation g's rows in the CSVs and removes the pending file. A
//! learner that starts finds the pending file: with its checkpoint present it
//! writes the rows again (replacing, so never twice), without it it drops
//! them and trains g again. Only the learner writes selfplay.csv and
//! train.csv. After the last generation it writes `finished.json`.

use crate::error::{at, TrainError};
use crate::run::{bar, chrono_like_now, Run, Stage, FINISHED_MARKER};
use crate::shard::{read_shard, read_shard_header, ShardError, ShardHeader};
use halatafl_dataio::run_rows::{append_rows, replace_generation_rows, SelfPlayRow, TrainRow};
use halatafl_dataio::write_atomically;
use halatafl_nn::checkpoint;
use halatafl_nn::{AuxTarget, Batch, PerTarget, Sample, Trainer};
use halatafl_rules::Position;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A trained generation not yet written anywhere.
pub(crate) struct TrainedGeneration {
    pub trainer: Trainer,
    /// Its train.csv rows.
    pub rows: Vec<TrainRow>,
    /// The log's line about it (none for a generation of no steps).
    pub log_line: Option<String>,
}

impl Run {
    /// The shard files of generation `g` in name order (none when its folder
    /// does not exist yet). Hidden names are temporary files being written
    /// (or left by a killed writer) and are never read.
    pub(crate) fn shard_files(&self, g: u32) -> Result<Vec<PathBuf>, TrainError> {
        let dir = self.shard_dir(g);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(TrainError::io(&dir, e)),
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "shard")
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        files.sort();
        Ok(files)
    }

    /// Reads shard `path` of generation `g` with `read`. A shard that is
    /// damaged (its checksum or records fail), foreign (not a halatafl shard,
    /// another encoding or format version, another generation's) or not a
    /// regular file is set aside: renamed to `<name>.rejected` beside it,
    /// named in the log, and read as `None`, so one bad file does not stop
    /// the learner and every worker. A shard that cannot be read for another
    /// reason (permissions, a failing disk) still stops the stage.
    pub(crate) fn read_run_shard<T>(
        &self,
        g: u32,
        path: &Path,
        read: impl Fn(&Path) -> Result<(ShardHeader, T), ShardError>,
    ) -> Result<Option<(ShardHeader, T)>, TrainError> {
        let why = match read(path) {
            Ok((header, _)) if header.generation != g => format!(
                "shard {}: written for generation {}, found among generation {g}'s",
                path.display(),
                header.generation
            ),
            Ok(read) => return Ok(Some(read)),
            Err(e) if e.is_bad_file() => e.to_string(),
            // Set aside by another process since it was listed.
            Err(ShardError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(e.into()),
        };
        let mut aside = path.as_os_str().to_owned();
        aside.push(".rejected");
        let aside = PathBuf::from(aside);
        match std::fs::rename(path, &aside) {
            Ok(()) => self.log(&format!(
                "set aside {why}; renamed to {} and skipped",
                aside.display()
            )),
            // Another process set it aside first.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(TrainError::io(path, e)),
        }
        Ok(None)
    }

    /// [`Run::read_run_shard`] for a shard's header alone.
    pub(crate) fn read_run_shard_header(
        &self,
        g: u32,
        path: &Path,
    ) -> Result<Option<ShardHeader>, TrainError> {
        let header = |p: &Path| read_shard_header(p).map(|h| (h, ()));
        Ok(self.read_run_shard(g, path, header)?.map(|(h, ())| h))
    }

    /// Samples of generation `g`'s shards, in file order, with the value
    /// target blended with the search value by `search_value_mix`.
    pub(crate) fn generation_samples(&self, g: u32) -> Result<Vec<Sample>, TrainError> {
        let mix = self.config.replay.search_value_mix;
        let mut out = Vec::new();
        for f in self.shard_files(g)? {
            let Some((_, samples)) = self.read_run_shard(g, &f, read_shard)? else {
                continue;
            };
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
    pub(crate) fn window(&self, generation: u32) -> Result<Vec<Sample>, TrainError> {
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

    /// The positions self-play of `generation` may begin at
    /// (`selfplay.start_position_fraction`): those of `selfplay.start_games`,
    /// of the replay window's samples before it and of generation 0's
    /// expert games. Empty when the
    /// fraction is 0, so a run that does not ask for it reads nothing.
    pub(crate) fn start_positions(&self, generation: u32) -> Result<Vec<Position>, TrainError> {
        if self.config.selfplay.start_position_fraction <= 0.0 {
            return Ok(Vec::new());
        }
        let mut out = self.config.start_game_positions()?;
        if generation > 1 {
            out.extend(self.window(generation - 1)?.iter().map(|s| s.position));
        }
        out.extend(self.generation_samples(0)?.iter().map(|s| s.position));
        Ok(out)
    }

    /// Trains checkpoint `generation` from the one before it (or from the
    /// seeded network for generation 0) on the replay window as it is now,
    /// and writes nothing: the caller publishes the checkpoint and the rows.
    pub(crate) fn train_generation(
        &self,
        generation: u32,
    ) -> Result<TrainedGeneration, TrainError> {
        let cfg = &self.config;
        let device = halatafl_nn::parse_device(&cfg.run.device)?;
        let mut trainer = if generation == 0 {
            self.initial_trainer(device)?
        } else {
            checkpoint::load(
                &self.checkpoint(generation - 1),
                Some(cfg.net_config()?),
                device,
            )?
            .0
        };
        // Auxiliary heads: a config that turns one on adds it to a
        // checkpoint of before (how a run is resumed with it); one that turns
        // it off is refused rather than silently dropping trained weights.
        let heads = cfg.network.heads();
        for target in AuxTarget::ALL {
            let (label, head_key) = (target.spec().label, target.head_key());
            match (heads.has(target), trainer.net.aux_head(target).is_some()) {
                (true, false) => {
                    trainer.add_head(target, self.stage_seed(generation, Stage::Train));
                    self.log(&format!(
                        "generation {generation}: checkpoint {} has no {label} head; \
                         training adds a freshly initialised one (network.{head_key} = true)",
                        self.checkpoint(generation - 1).display()
                    ));
                }
                (false, true) => {
                    return Err(TrainError::Stage {
                        generation,
                        why: format!(
                            "checkpoint {} has a {label} head but network.{head_key} = false: \
                             set it to true (with train.{} > 0) to go on training it",
                            self.checkpoint(generation - 1).display(),
                            target.weight_key()
                        ),
                    });
                }
                _ => {}
            }
        }
        // The schedule and optimizer settings come from this run's config.
        trainer.config = cfg.train_config()?;
        let window = self.window(generation)?;
        if window.is_empty() {
            return Err(TrainError::Stage {
                generation,
                why: "no samples in the replay window".into(),
            });
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
        // The auxiliary losses since the last row (train.csv has no columns
        // for them, so that runs from before the heads keep their files).
        let mut aux_loss = PerTarget::<f64>::default();
        let mut last_aux_loss = PerTarget::<f64>::default();
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
                    return Err(TrainError::Stage {
                        generation,
                        why: format!(
                            "{e}. The stage stopped before writing anything \
                         (checkpoint, train.csv rows, progress), so it is not marked done. A \
                         non-finite loss comes from a damaged network ({}) or samples, or from a \
                         learning rate that diverges (train.lr = {})",
                            if generation == 0 {
                                "the seeded initial one".to_string()
                            } else {
                                self.checkpoint(generation - 1).display().to_string()
                            },
                            cfg.train.lr
                        ),
                    });
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
            for (target, loss) in aux_loss.iter_mut() {
                *loss += l.aux[target];
            }
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
                last_aux_loss = aux_loss.map(|_, loss| loss / n);
                aux_loss = PerTarget::default();
                timer = Instant::now();
            }
        }
        pb.finish_and_clear();
        let log_line = rows.last().map(|r| {
            format!(
                "generation {generation} training: {steps} steps on {} samples{}, policy loss {:.3}, value loss {:.3}{}, {:.0} samples/s",
                r.window_samples,
                if expert.is_empty() {
                    String::new()
                } else {
                    format!(" ({:.0}% of each batch from {} expert samples)", 100.0 * expert_fraction, expert.len())
                },
                r.policy_loss, r.value_loss,
                trainer
                    .net
                    .aux_heads
                    .iter()
                    .map(|h| format!(", {} {:.4}", h.target.spec().loss_name, last_aux_loss[h.target]))
                    .collect::<String>(),
                r.samples_per_second
            )
        });
        Ok(TrainedGeneration {
            trainer,
            rows,
            log_line,
        })
    }

    /// Writes checkpoint `generation` (atomically: readers see the whole file
    /// or none).
    pub(crate) fn save_checkpoint(
        &self,
        trainer: &Trainer,
        generation: u32,
    ) -> Result<(), TrainError> {
        let path = self.checkpoint(generation);
        let mut extra = std::collections::BTreeMap::new();
        extra.insert("generation".to_string(), generation.to_string());
        // Network agents refuse to play a variant their network was not trained on.
        extra.insert(
            checkpoint::VARIANT_KEY.to_string(),
            self.config.variant()?.to_string(),
        );
        checkpoint::save(trainer, &path, &extra).map_err(at(&path))
    }

    /// Generation `generation`'s training in turn (`halatafl train`): train,
    /// then the checkpoint, then its train.csv rows.
    pub fn train_stage(&self, generation: u32) -> Result<(), TrainError> {
        let trained = self.train_generation(generation)?;
        self.save_checkpoint(&trained.trainer, generation)?;
        append_rows(&self.dir.join("train.csv"), trained.rows)?;
        if let Some(line) = trained.log_line {
            self.log(&line);
        }
        Ok(())
    }
}

/// What the learner writes before a checkpoint and finishes after it.
pub const PENDING_FILE: &str = "learner-pending.json";

/// The rows of a checkpoint being published (see the module doc).
#[derive(Serialize, Deserialize)]
struct PendingPublication {
    generation: u32,
    train_rows: Vec<TrainRow>,
    selfplay_row: Option<SelfPlayRow>,
}

/// Self-play samples (generations 1 on) that must exist before checkpoint
/// `generation` is trained: training samples of generations 1..=generation
/// over the ratio, rounded up.
pub fn samples_needed(generation: u32, steps: u64, batch_size: usize, train_ratio: f64) -> u64 {
    let trained = generation as f64 * steps as f64 * batch_size as f64;
    (trained / train_ratio).ceil() as u64
}

/// The learner's waiting rule: it trains checkpoint `generation` once the
/// self-play shards hold the samples [`samples_needed`] asks for and its
/// replay window is not empty; otherwise it waits for self-play.
pub fn learner_may_train(
    generation: u32,
    selfplay_samples: u64,
    window_samples: u64,
    steps: u64,
    batch_size: usize,
    train_ratio: f64,
) -> bool {
    window_samples > 0
        && selfplay_samples >= samples_needed(generation, steps, batch_size, train_ratio)
}

/// The self-play workers' waiting rule, the other side of the learner's: a
/// worker plays on while the shards hold fewer samples than the learner
/// needs for checkpoint `published + 1 + max_ahead` (see
/// `async.max_ahead_generations`), and waits otherwise.
pub fn selfplay_may_play(
    published: u32,
    selfplay_samples: u64,
    max_ahead: u32,
    steps: u64,
    batch_size: usize,
    train_ratio: f64,
) -> bool {
    let target = published.saturating_add(1).saturating_add(max_ahead);
    selfplay_samples < samples_needed(target, steps, batch_size, train_ratio)
}

/// Sample counts of the self-play shards, read from their headers once each
/// (a shard never changes after its rename).
#[derive(Default)]
pub(crate) struct SampleCounts {
    /// Shard file -> (generation, samples).
    seen: BTreeMap<PathBuf, (u32, u64)>,
}

impl SampleCounts {
    /// Samples per generation (1 on) of the shards present now.
    pub(crate) fn refresh(&mut self, run: &Run) -> Result<BTreeMap<u32, u64>, TrainError> {
        let shards = run.dir.join("shards");
        let mut generations: Vec<u32> = std::fs::read_dir(&shards)
            .map_err(at(&shards))?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_prefix("gen_")?.parse::<u32>().ok()
            })
            .filter(|&g| g >= 1)
            .collect();
        generations.sort();
        for g in generations {
            for path in run.shard_files(g)? {
                if let std::collections::btree_map::Entry::Vacant(entry) = self.seen.entry(path) {
                    if let Some(h) = run.read_run_shard_header(g, entry.key())? {
                        entry.insert((g, h.count as u64));
                    }
                }
            }
        }
        let mut per_generation = BTreeMap::new();
        for &(g, count) in self.seen.values() {
            *per_generation.entry(g).or_insert(0) += count;
        }
        Ok(per_generation)
    }
}

impl Run {
    /// `halatafl stage learn --run DIR`: see the module doc.
    pub fn run_learner(&self) -> Result<(), TrainError> {
        self.require_async()?;
        let _lock = self.exclusive("learner", "a learner")?;
        halatafl_nn::set_threads(self.config.run.torch_threads);
        self.finish_publication()?;
        let cfg = &self.config;
        let last = cfg.run.generations;
        let steps = cfg.train.steps_per_generation;
        let batch = cfg.train.batch_size;
        let ratio = cfg.asynchronous.train_ratio;
        let mut counts = SampleCounts::default();
        loop {
            let published = self.newest_checkpoint()?.ok_or_else(|| {
                TrainError::Refused(format!("{}: no checkpoint", self.dir.display()))
            })?;
            if published >= last {
                break;
            }
            let generation = published + 1;
            let first = generation
                .saturating_sub(cfg.replay.window_generations - 1)
                .max(1);
            let mut waited = false;
            loop {
                let per_generation = counts.refresh(self)?;
                let total: u64 = per_generation.values().sum();
                let window: u64 = per_generation
                    .range(first..=generation)
                    .map(|(_, n)| n)
                    .sum();
                if learner_may_train(generation, total, window, steps, batch, ratio) {
                    break;
                }
                if !waited {
                    self.log(&format!(
                        "learner: waiting for self-play before generation {generation}: {total} of {} samples, {window} in the window",
                        samples_needed(generation, steps, batch, ratio)
                    ));
                    waited = true;
                }
                self.poll_pause();
            }
            let trained = self.train_generation(generation)?;
            self.publish(generation, trained)?;
        }
        if !self.is_finished() {
            let path = self.dir.join(FINISHED_MARKER);
            let info = serde_json::json!({ "generation": last, "at": chrono_like_now() });
            write_atomically(&path, info.to_string().as_bytes()).map_err(at(&path))?;
            self.log(&format!(
                "learner: generation {last} published; the run is finished"
            ));
        }
        Ok(())
    }

    /// Publishes checkpoint `generation` (see the module doc).
    fn publish(&self, generation: u32, trained: TrainedGeneration) -> Result<(), TrainError> {
        let pending = PendingPublication {
            generation,
            train_rows: trained.rows,
            selfplay_row: self.selfplay_row_from_shards(generation)?,
        };
        let path = self.dir.join(PENDING_FILE);
        let text = serde_json::to_string(&pending).expect("rows serialise");
        write_atomically(&path, text.as_bytes()).map_err(at(&path))?;
        self.save_checkpoint(&trained.trainer, generation)?;
        self.finish_publication()?;
        if let Some(line) = trained.log_line {
            self.log(&line);
        }
        Ok(())
    }

    /// Finishes (or, without its checkpoint, drops) a pending publication.
    fn finish_publication(&self) -> Result<(), TrainError> {
        let path = self.dir.join(PENDING_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(TrainError::io(&path, e)),
        };
        let pending: PendingPublication =
            serde_json::from_str(&text).map_err(|e| TrainError::BadFile {
                path: path.clone(),
                why: format!("not the learner's pending rows: {e}"),
            })?;
        let g = pending.generation;
        if self.checkpoint(g).exists() {
            replace_generation_rows(&self.dir.join("train.csv"), g, pending.train_rows)?;
            if let Some(row) = pending.selfplay_row {
                replace_generation_rows(&self.dir.join("selfplay.csv"), g, vec![row])?;
            }
        } else {
            self.log(&format!(
                "learner: generation {g} was not published before the learner stopped; training it again"
            ));
        }
        std::fs::remove_file(&path).map_err(at(&path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_learner_waits_until_self_play_keeps_up_with_the_ratio() {
        // 10 steps of 32 per generation at ratio 4: 80 new samples per generation.
        assert_eq!(samples_needed(1, 10, 32, 4.0), 80);
        assert_eq!(samples_needed(3, 10, 32, 4.0), 240);
        // Rounded up: 1 x 1 x 1 / 3 needs one sample, not zero.
        assert_eq!(samples_needed(1, 1, 1, 3.0), 1);
        assert!(!learner_may_train(2, 159, 100, 10, 32, 4.0));
        assert!(learner_may_train(2, 160, 100, 10, 32, 4.0));
        assert!(learner_may_train(2, 10_000, 1, 10, 32, 4.0));
        // Enough samples overall, but none in the window: wait.
        assert!(!learner_may_train(2, 10_000, 0, 10, 32, 4.0));
        // A huge ratio trains as soon as there is anything.
        assert!(learner_may_train(5, 1, 1, 10, 32, 1e6));
    }

    #[test]
    fn workers_wait_when_self_play_is_far_enough_ahead() {
        // 80 samples per generation; checkpoint 2 published. With 2
        // generations ahead allowed, workers play until checkpoint 5's
        // 400 samples exist.
        assert!(selfplay_may_play(2, 399, 2, 10, 32, 4.0));
        assert!(!selfplay_may_play(2, 400, 2, 10, 32, 4.0));
        // Ahead 0: only what the learner's next checkpoint needs.
        assert!(selfplay_may_play(2, 239, 0, 10, 32, 4.0));
        assert!(!selfplay_may_play(2, 240, 0, 10, 32, 4.0));
        // The learner's next checkpoint is always reachable: whenever the
        // workers wait, the learner may train (given a non-empty window).
        for samples in 0..1000 {
            if !selfplay_may_play(2, samples, 0, 10, 32, 4.0) {
                assert!(learner_may_train(3, samples, 1, 10, 32, 4.0));
            }
        }
    }
}
