//! The training step: policy cross-entropy + value cross-entropy + L2 (as in
//! AlphaZero, Silver et al. 2018: l = -pi^T log p + CE(z, v) + c ||theta||^2),
//! plus, for each auxiliary head the network has ([`crate::targets`]), its
//! weight in `aux_weights` times its Huber loss (the target's delta) against
//! the label / the target's scale, averaged over the samples that have a
//! label (the others do not train the head); with SGD+Nesterov momentum or
//! Adam, a learning-rate schedule, and gradient
//! clipping by global norm. The optimizer is written here over the var store's
//! tensors (a few lines each) so that its state can be saved in checkpoints.

use crate::autocast::with_bf16_autocast;
use crate::config::NetConfig;
use crate::inference::Precision;
use crate::model::{AuxHead, HeadOutputs, PolicyValueNet};
use crate::sample::Batch;
use crate::targets::{AuxTarget, AuxWeights, PerTarget};
use serde::{Deserialize, Serialize};
use tch::{nn, Device, Kind, Tensor};
use thiserror::Error;

/// The optimizer a [`Trainer`] steps with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// SGD with Nesterov momentum (`momentum`).
    Sgd,
    /// Adam (`momentum` as beta1, `beta2`), with bias correction.
    Adam,
}

/// Learning rate over steps: linear warm-up, then constant, step decay or cosine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum LrSchedule {
    /// The base rate throughout.
    Constant,
    /// Multiply by `gamma` at each step in `milestones`.
    Step {
        /// Steps from which one more factor `gamma` applies.
        milestones: Vec<u64>,
        /// The factor applied at each milestone passed.
        gamma: f64,
    },
    /// Cosine from the base rate to `min_lr` over `total_steps`.
    Cosine {
        /// Steps over which the rate falls; it stays at `min_lr` after.
        total_steps: u64,
        /// The rate at and after `total_steps`.
        min_lr: f64,
    },
}

/// The training step's settings: optimizer, learning rate and its
/// schedule, loss weights, clipping and precision. Stored in every
/// checkpoint's metadata.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainConfig {
    /// `sgd` (Nesterov momentum) or `adam`.
    pub optimizer: OptimizerKind,
    /// Base learning rate.
    pub lr: f64,
    /// SGD momentum, or Adam's beta1.
    pub momentum: f64,
    /// Adam's beta2.
    pub beta2: f64,
    /// L2 coefficient c on convolution and linear weights (not biases or norms).
    pub l2: f64,
    /// Weight of the value loss against the policy loss.
    pub value_weight: f64,
    /// Weight of each auxiliary head's loss (0: the head, if any, is not
    /// trained), written as `<target>_weight` keys when not 0, so checkpoints
    /// of runs without auxiliary heads keep the metadata they always had.
    /// Any other key is refused (this field reads every key the others do
    /// not, in place of `deny_unknown_fields`).
    #[serde(flatten)]
    pub aux_weights: AuxWeights,
    /// Clip the global gradient norm to this (0: no clipping).
    pub grad_clip: f64,
    /// Linear warm-up steps.
    pub warmup_steps: u64,
    /// The rate's course after the warm-up.
    pub schedule: LrSchedule,
    /// `f32`, or `bf16`: mixed precision, the forward pass's convolutions and
    /// products in bf16 under autocast, weights, gradients and losses in fp32.
    /// Meant for GPUs and CPUs with AMX or AVX-512 BF16; measure with
    /// `halatafl bench-net` before choosing it.
    pub precision: Precision,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            optimizer: OptimizerKind::Adam,
            lr: 2e-3,
            momentum: 0.9,
            beta2: 0.999,
            l2: 1e-4,
            value_weight: 1.0,
            aux_weights: AuxWeights::default(),
            grad_clip: 5.0,
            warmup_steps: 50,
            schedule: LrSchedule::Constant,
            precision: Precision::F32,
        }
    }
}

impl TrainConfig {
    /// The learning rate of the step taken after `step` steps: the
    /// schedule's rate, scaled by `(step + 1) / warmup_steps` during the
    /// warm-up.
    pub fn lr_at(&self, step: u64) -> f64 {
        let base = match &self.schedule {
            LrSchedule::Constant => self.lr,
            LrSchedule::Step { milestones, gamma } => {
                self.lr * gamma.powi(milestones.iter().filter(|&&m| step >= m).count() as i32)
            }
            LrSchedule::Cosine {
                total_steps,
                min_lr,
            } => {
                let t = (step as f64 / (*total_steps).max(1) as f64).min(1.0);
                min_lr + 0.5 * (self.lr - min_lr) * (1.0 + (std::f64::consts::PI * t).cos())
            }
        };
        if self.warmup_steps > 0 && step < self.warmup_steps {
            base * (step + 1) as f64 / self.warmup_steps as f64
        } else {
            base
        }
    }
}

/// Loss components of one step (means over the batch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Losses {
    /// Policy cross-entropy against the target distribution.
    pub policy: f64,
    /// Value cross-entropy against the win/draw/loss target, unweighted.
    pub value: f64,
    /// Each auxiliary head's loss, unweighted (0 without the head).
    pub aux: PerTarget<f64>,
    /// The L2 term, already times the `l2` coefficient.
    pub l2: f64,
    /// What was minimised: policy + `value_weight` x value + l2, plus each
    /// auxiliary head's weight x its loss.
    pub total: f64,
    /// Global gradient norm before clipping.
    pub grad_norm: f64,
    /// The learning rate of this step.
    pub lr: f64,
}

/// A training step that met a non-finite loss term or gradient norm.
#[derive(Clone, Copy, Debug, PartialEq, Error)]
#[error(
    "training step {step}: the {what} is {value}, not a finite number (the step was not applied)"
)]
pub struct NonFiniteLoss {
    /// The step that was refused (the trainer's step count plus one).
    pub step: u64,
    /// `policy loss`, `value loss`, an auxiliary head's loss (`moves-left
    /// loss`), `l2 loss`, `total loss` or `gradient norm`.
    pub what: &'static str,
    /// The offending value (NaN or infinite).
    pub value: f64,
}

/// The loss terms of one batch, as tensors (means over the batch).
pub struct LossTerms {
    /// Policy cross-entropy.
    pub policy: Tensor,
    /// Value cross-entropy, unweighted.
    pub value: Tensor,
    /// Each auxiliary head's loss, unweighted; `None` without the head.
    pub aux: PerTarget<Option<Tensor>>,
    /// The L2 term, already times `l2`.
    pub l2: Tensor,
}

/// A network with its optimizer state.
pub struct Trainer {
    /// The variable store that owns the network's tensors (what checkpoints
    /// save under `net/`).
    pub vs: nn::VarStore,
    /// The network, its tensors in `vs`.
    pub net: PolicyValueNet,
    /// The training settings.
    pub config: TrainConfig,
    /// Steps taken so far (drives the schedule and Adam's bias correction).
    pub step: u64,
    /// Per trainable variable, by name: first and second moment buffers.
    pub(crate) moments: Vec<(String, Tensor, Tensor)>,
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("net", &self.net.config)
            .field("step", &self.step)
            .finish()
    }
}

/// Held while weights are drawn from libtorch's generator after seeding it.
static SEEDED_DRAWS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` (which draws initial weights) right after seeding libtorch's
/// generator with `seed`, with no other seeded draw in between.
///
/// Decision: libtorch has one generator per process, so two threads that
/// each seed it and then draw interleave their draws, and a seeded network
/// gets other weights than the same seed gives alone (seen as a flaky test
/// when the test harness built trainers on parallel threads). Holding a
/// lock over seed-and-draw makes a seed fix the weights wherever the
/// trainer is built.
fn seeded<T>(seed: u64, f: impl FnOnce() -> T) -> T {
    let _held = SEEDED_DRAWS.lock().unwrap_or_else(|e| e.into_inner());
    tch::manual_seed(seed as i64);
    f()
}

impl Trainer {
    /// A freshly initialised network. `seed` fixes the initial weights.
    pub fn new(net_config: NetConfig, config: TrainConfig, device: Device, seed: u64) -> Trainer {
        let vs = nn::VarStore::new(device);
        let net = seeded(seed, || PolicyValueNet::new(&vs.root(), net_config));
        let mut t = Trainer {
            vs,
            net,
            config,
            step: 0,
            moments: Vec::new(),
        };
        t.reset_moments();
        t
    }

    pub(crate) fn reset_moments(&mut self) {
        self.moments = self
            .named_trainables()
            .into_iter()
            .map(|(n, t)| (n, t.zeros_like(), t.zeros_like()))
            .collect();
    }

    /// The device the network's tensors live on.
    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// Trainable variables by name, in name order (matches `moments`).
    fn named_trainables(&self) -> Vec<(String, Tensor)> {
        let mut vars: Vec<(String, Tensor)> = self
            .vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        vars
    }

    /// Loss terms for a batch without updating anything: (policy, value, l2).
    pub fn losses(&self, batch: &Batch, train: bool) -> (Tensor, Tensor, Tensor) {
        let t = self.loss_terms(batch, train);
        (t.policy, t.value, t.l2)
    }

    /// Every loss term for a batch; the auxiliary ones for the heads the
    /// network has.
    pub fn loss_terms(&self, batch: &Batch, train: bool) -> LossTerms {
        let heads = match self.config.precision {
            Precision::F32 => self.net.forward_heads_t(&batch.planes, train),
            Precision::Bf16 => {
                let h = with_bf16_autocast(self.device(), || {
                    self.net.forward_heads_t(&batch.planes, train)
                });
                HeadOutputs {
                    policy: h.policy.to_kind(Kind::Float),
                    value: h.value.to_kind(Kind::Float),
                    aux: h.aux.map(|_, m| m.map(|m| m.to_kind(Kind::Float))),
                }
            }
        };
        let logp = batch.move_log_probs(&heads.policy);
        let policy_loss = -(&batch.policy * logp)
            .sum_dim_intlist(1, false, Kind::Float)
            .mean(Kind::Float);
        let value_logp = heads.value.log_softmax(1, Kind::Float);
        let value_loss = -(&batch.wdl * value_logp)
            .sum_dim_intlist(1, false, Kind::Float)
            .mean(Kind::Float);
        let aux = heads.aux.map(|target, predicted| {
            let (label, mask) = &batch.aux[target];
            predicted.map(|predicted| {
                let per_sample =
                    predicted.huber_loss(label, tch::Reduction::None, target.spec().huber_delta);
                let known = mask.sum(Kind::Float).clamp_min(1.0);
                (per_sample * mask).sum(Kind::Float) / known
            })
        });
        let mut l2 = Tensor::zeros([], (Kind::Float, self.device()));
        for (name, t) in self.named_trainables() {
            if name.ends_with(".weight") && t.dim() > 1 {
                l2 += t.pow_tensor_scalar(2).sum(Kind::Float);
            }
        }
        LossTerms {
            policy: policy_loss,
            value: value_loss,
            aux,
            l2: l2 * self.config.l2,
        }
    }

    /// Adds a freshly initialised head for `target` (seeded by `seed`) to a
    /// network without one, with zero optimizer moments for its weights;
    /// every other weight and moment is kept. This is how a run whose config
    /// turns a head on resumes from a checkpoint that lacks it.
    pub fn add_head(&mut self, target: AuxTarget, seed: u64) {
        if self.net.aux_head(target).is_some() {
            return;
        }
        let config = self.net.config.with_head(target, true);
        let head = seeded(seed, || AuxHead::new(&self.vs.root(), target, &config));
        self.net.aux_heads.push(head);
        self.net.aux_heads.sort_by_key(|h| h.target);
        self.net.config = config;
        let mut old: std::collections::HashMap<String, (Tensor, Tensor)> = self
            .moments
            .drain(..)
            .map(|(n, m, v)| (n, (m, v)))
            .collect();
        self.moments = self
            .named_trainables()
            .into_iter()
            .map(|(n, t)| match old.remove(&n) {
                Some((m, v)) => (n, m, v),
                None => (n, t.zeros_like(), t.zeros_like()),
            })
            .collect();
    }

    /// One optimisation step on `batch`. A step whose loss or gradient norm
    /// is not finite (a damaged network or sample, a diverging rate) is not
    /// applied: the weights, moments and step count stay as they were, so
    /// the caller can stop before it saves a poisoned network. The forward
    /// pass has already updated the batch-norm running statistics, though,
    /// so a trainer that returned this error must not be saved.
    pub fn train_step(&mut self, batch: &Batch) -> Result<Losses, NonFiniteLoss> {
        let terms = self.loss_terms(batch, true);
        let (policy_loss, value_loss, l2) = (&terms.policy, &terms.value, &terms.l2);
        let mut total = policy_loss + value_loss * self.config.value_weight + l2;
        for (target, term) in terms.aux.iter() {
            if let Some(term) = term {
                total += term * self.config.aux_weights[target];
            }
        }
        let vars = self.named_trainables();
        for (_, t) in &vars {
            let mut g = t.grad();
            if g.defined() {
                let _ = g.zero_();
            }
        }
        total.backward();
        let lr = self.config.lr_at(self.step);
        let grad_norm = tch::no_grad(|| {
            let mut sq = 0f64;
            for (_, t) in &vars {
                let g = t.grad();
                if g.defined() {
                    sq += g.pow_tensor_scalar(2).sum(Kind::Float).double_value(&[]);
                }
            }
            sq.sqrt()
        });
        let losses = Losses {
            policy: policy_loss.double_value(&[]),
            value: value_loss.double_value(&[]),
            aux: PerTarget::from_fn(|t| terms.aux[t].as_ref().map_or(0.0, |m| m.double_value(&[]))),
            l2: l2.double_value(&[]),
            total: total.double_value(&[]),
            grad_norm,
            lr,
        };
        let aux_terms = losses.aux.iter().map(|(t, &v)| (t.spec().loss_name, v));
        let terms = [("policy loss", losses.policy), ("value loss", losses.value)]
            .into_iter()
            .chain(aux_terms)
            .chain([
                ("l2 loss", losses.l2),
                ("total loss", losses.total),
                ("gradient norm", losses.grad_norm),
            ]);
        if let Some((what, value)) = terms.into_iter().find(|(_, v)| !v.is_finite()) {
            return Err(NonFiniteLoss {
                step: self.step + 1,
                what,
                value,
            });
        }
        tch::no_grad(|| {
            let clip = if self.config.grad_clip > 0.0 && grad_norm > self.config.grad_clip {
                self.config.grad_clip / grad_norm
            } else {
                1.0
            };
            self.step += 1;
            let t_step = self.step as f64;
            for ((_, var), (_, m, v)) in vars.iter().zip(self.moments.iter_mut()) {
                let g = var.grad();
                if !g.defined() {
                    continue;
                }
                let g = g * clip;
                let mut var = var.shallow_clone();
                match self.config.optimizer {
                    OptimizerKind::Sgd => {
                        let mu = self.config.momentum;
                        let _ = m.g_mul_scalar_(mu).g_add_(&g);
                        // Nesterov: step along g + mu * buf.
                        let _ = var.g_sub_(&((&g + &*m * mu) * lr));
                    }
                    OptimizerKind::Adam => {
                        let (b1, b2) = (self.config.momentum, self.config.beta2);
                        let _ = m.g_mul_scalar_(b1).g_add_(&(&g * (1.0 - b1)));
                        let _ = v
                            .g_mul_scalar_(b2)
                            .g_add_(&(g.pow_tensor_scalar(2) * (1.0 - b2)));
                        let m_hat = &*m / (1.0 - b1.powf(t_step));
                        let v_hat = &*v / (1.0 - b2.powf(t_step));
                        let _ = var.g_sub_(&(m_hat / (v_hat.sqrt() + 1e-8) * lr));
                    }
                }
            }
        });
        Ok(losses)
    }
}
