//! Training: checkpoint g from checkpoint g-1 on the replay window (the
//! shards of generations g-W+1 ..= g, W = `replay.window_generations`, plus a
//! share of the expert's samples in the first generations). In turn
//! ([`Run::train_stage`]) for `halatafl train`.

use crate::error::{at, TrainError};
use crate::rows::{append_rows, TrainRow};
use crate::run::{bar, Run, Stage};
use crate::shard::read_shard;
use halatafl_nn::checkpoint;
use halatafl_nn::{Batch, Sample, Trainer};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;
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

    /// Samples of generation `g`'s shards, in file order, with the value
    /// target blended with the search value by `search_value_mix`.
    pub(crate) fn generation_samples(&self, g: u32) -> Result<Vec<Sample>, TrainError> {
        let mix = self.config.replay.search_value_mix;
        let mut out = Vec::new();
        for f in self.shard_files(g)? {
            let (_, samples) = read_shard(&f)?;
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
        let log_line = rows.last().map(|r| {
            format!(
                "generation {generation} training: {steps} steps on {} samples{}, policy loss {:.3}, value loss {:.3}, {:.0} samples/s",
                r.window_samples,
                if expert.is_empty() {
                    String::new()
                } else {
                    format!(" ({:.0}% of each batch from {} expert samples)", 100.0 * expert_fraction, expert.len())
                },
                r.policy_loss, r.value_loss, r.samples_per_second
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
