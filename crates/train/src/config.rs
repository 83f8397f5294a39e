//! The run config: one TOML file holds every knob of a training run. Unknown
//! keys are errors that name the key and its line (`serde(deny_unknown_fields)`),
//! and every default lives in one `Default` impl per section.

use halatafl_nn::{LrSchedule, NetConfig, OptimizerKind, TrainConfig};
use halatafl_rules::Variant;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub run: RunSection,
    pub game: GameSection,
    pub network: NetworkSection,
    pub bootstrap: BootstrapSection,
    pub search: SearchSection,
    pub selfplay: SelfPlaySection,
    pub replay: ReplaySection,
    pub train: TrainSection,
    pub eval: EvalSection,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Generations of self-play -> training -> evaluation.
    pub generations: u32,
    /// Master seed: every other seed is derived from it.
    pub seed: u64,
    /// Worker threads for self-play and evaluation games.
    pub threads: usize,
    /// libtorch intra-op threads for the trainer and the inference thread.
    pub torch_threads: usize,
    /// `cpu`, `cuda`, `cuda:N` or `auto`.
    pub device: String,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            generations: 4,
            seed: 1,
            threads: 2,
            torch_threads: 2,
            device: "cpu".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GameSection {
    /// `two-foxes` or `classic`, with options: `classic geese=15 sideways`,
    /// `two-foxes corner-links`.
    pub variant: String,
}

impl Default for GameSection {
    fn default() -> Self {
        GameSection {
            variant: "two-foxes".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkSection {
    /// Preset `b<blocks>c<channels>`, e.g. `b4c32`, `b6c64`.
    pub preset: String,
    /// Inference precision in self-play and evaluation: `f32` or `bf16`.
    pub precision: String,
    /// Most positions per network call.
    pub max_batch: usize,
    /// Evaluation cache entries per inference server.
    pub cache_entries: usize,
}

impl Default for NetworkSection {
    fn default() -> Self {
        NetworkSection {
            preset: "b4c32".into(),
            precision: "f32".into(),
            max_batch: 256,
            cache_entries: 1 << 18,
        }
    }
}

/// Warm start from an expert before generation 1 (see [`crate::bootstrap`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BootstrapSection {
    /// Expert games played as generation 0 (0: generation 0 is a randomly
    /// initialised network, pure self-play from scratch).
    pub games: usize,
    /// The expert, as a non-network agent spec. A depth-limited alpha-beta is
    /// deterministic, so the run stays reproducible; `ms=` would not be.
    pub agent: String,
    /// Random plies before the expert takes over (not recorded as samples).
    pub opening_plies: usize,
    /// Training steps of generation 0, on the expert's samples alone.
    pub steps: u64,
    /// Share of every later training batch drawn from the expert's samples ...
    pub replay_fraction: f64,
    /// ... in generations 1 to this one (0: none after generation 0).
    pub replay_generations: u32,
}

impl Default for BootstrapSection {
    fn default() -> Self {
        BootstrapSection {
            games: 0,
            agent: "alphabeta:depth=4".into(),
            opening_plies: 6,
            steps: 1000,
            replay_fraction: 0.25,
            replay_generations: 3,
        }
    }
}

impl BootstrapSection {
    pub fn enabled(&self) -> bool {
        self.games > 0
    }

    /// The share of generation `g`'s batches drawn from the expert's samples.
    pub fn fraction_in(&self, generation: u32) -> f64 {
        if self.enabled() && generation >= 1 && generation <= self.replay_generations {
            self.replay_fraction
        } else {
            0.0
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchSection {
    /// `puct` or `gumbel` root search.
    pub algorithm: String,
    /// Simulations of a full search (its positions become policy targets).
    pub simulations: u32,
    /// Playout cap randomization (Wu 2019, KataGo): a move gets a full search
    /// with this probability, else a fast search of `fast_simulations` whose
    /// position is not recorded. 1.0 disables it.
    pub full_search_probability: f64,
    pub fast_simulations: u32,
    /// PUCT c_init.
    pub c_puct: f32,
    /// First-play-urgency reduction.
    pub fpu_reduction: f32,
    /// Dirichlet alpha times the number of legal moves.
    pub dirichlet_alpha_scale: f32,
    /// Share of Dirichlet noise in the root priors (full searches only).
    pub dirichlet_epsilon: f32,
    /// Gumbel: actions sampled at the root.
    pub gumbel_m: u32,
    /// Move-choice temperature in the opening.
    pub temperature: f32,
    /// Plies played with `temperature`; after that, the most visited move.
    pub temperature_plies: u32,
    /// Leaves gathered from one tree per network call (virtual loss).
    pub leaves_per_tree: u32,
}

impl Default for SearchSection {
    fn default() -> Self {
        SearchSection {
            algorithm: "puct".into(),
            simulations: 64,
            full_search_probability: 0.25,
            fast_simulations: 16,
            c_puct: 1.25,
            fpu_reduction: 0.25,
            dirichlet_alpha_scale: 10.0,
            dirichlet_epsilon: 0.25,
            gumbel_m: 8,
            temperature: 1.0,
            temperature_plies: 16,
            leaves_per_tree: 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlaySection {
    /// Games per generation.
    pub games: usize,
    /// Games stepped together per worker thread (their leaves share network calls).
    pub concurrent_games: usize,
    /// A game still running after this many plies is adjudicated a draw.
    pub max_plies: usize,
    /// Resign when the searched value of the side to move stays below
    /// `-resign_threshold` for `resign_consecutive` of its moves (0 disables).
    pub resign_threshold: f32,
    pub resign_consecutive: u32,
    /// Share of games that would resign but are played out, to measure how
    /// often resigning would have been wrong.
    pub resign_playout_fraction: f64,
    /// Samples per shard file.
    pub samples_per_shard: usize,
}

impl Default for SelfPlaySection {
    fn default() -> Self {
        SelfPlaySection {
            games: 64,
            concurrent_games: 16,
            max_plies: 400,
            resign_threshold: 0.95,
            resign_consecutive: 3,
            resign_playout_fraction: 0.2,
            samples_per_shard: 4096,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplaySection {
    /// Train on the samples of the last this-many generations.
    pub window_generations: u32,
    /// Left-right mirror each drawn sample with probability 1/2.
    pub mirror: bool,
    /// Value target = (1 - mix) * game result + mix * search value.
    pub search_value_mix: f32,
}

impl Default for ReplaySection {
    fn default() -> Self {
        ReplaySection {
            window_generations: 4,
            mirror: true,
            search_value_mix: 0.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainSection {
    pub batch_size: usize,
    pub steps_per_generation: u64,
    /// Write a train.csv row every this many steps.
    pub log_every: u64,
    /// `adam` or `sgd` (Nesterov momentum).
    pub optimizer: OptimizerKind,
    pub lr: f64,
    pub momentum: f64,
    pub l2: f64,
    pub grad_clip: f64,
    pub warmup_steps: u64,
    /// `constant`, `cosine` (to `min_lr` over all generations' steps, the
    /// bootstrap's included) or `step`.
    pub schedule: String,
    pub min_lr: f64,
}

impl Default for TrainSection {
    fn default() -> Self {
        let t = TrainConfig::default();
        TrainSection {
            batch_size: 256,
            steps_per_generation: 200,
            log_every: 50,
            optimizer: t.optimizer,
            lr: t.lr,
            momentum: t.momentum,
            l2: t.l2,
            grad_clip: t.grad_clip,
            warmup_steps: t.warmup_steps,
            schedule: "constant".into(),
            min_lr: 1e-4,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalSection {
    /// Evaluate every this many generations (and always the last).
    pub every: u32,
    /// Games per opponent (sides alternate).
    pub games: usize,
    /// Opponents as agent specs; `previous` is the previous generation's net.
    pub opponents: Vec<String>,
    /// Simulations of the trained agent in evaluation games.
    pub simulations: u32,
    /// Random opening plies (each opening played with both colours).
    pub opening_plies: usize,
    /// Leaves per network call in the trained agent's search (virtual loss);
    /// evaluation games run one search each, so this is what fills batches.
    pub leaves_per_tree: u32,
}

impl Default for EvalSection {
    fn default() -> Self {
        EvalSection {
            every: 1,
            games: 20,
            opponents: vec![
                "random".into(),
                "alphabeta:depth=2".into(),
                "previous".into(),
            ],
            simulations: 64,
            opening_plies: 2,
            leaves_per_tree: 4,
        }
    }
}

impl RunConfig {
    pub fn from_toml(text: &str, origin: &Path) -> Result<RunConfig, String> {
        let config: RunConfig =
            toml::from_str(text).map_err(|e| format!("{}: {e}", origin.display()))?;
        config
            .validate()
            .map_err(|e| format!("{}: {e}", origin.display()))?;
        Ok(config)
    }

    pub fn load(path: &Path) -> Result<RunConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
        RunConfig::from_toml(&text, path)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("config serialises")
    }

    pub fn variant(&self) -> Result<Variant, String> {
        self.game
            .variant
            .parse::<Variant>()
            .map_err(|e| format!("[game] variant: {e}"))
    }

    pub fn net_config(&self) -> Result<NetConfig, String> {
        NetConfig::parse_preset(&self.network.preset).map_err(|e| format!("[network] preset: {e}"))
    }

    pub fn train_config(&self) -> Result<TrainConfig, String> {
        let t = &self.train;
        let bootstrap_steps = if self.bootstrap.enabled() {
            self.bootstrap.steps
        } else {
            0
        };
        let total = t.steps_per_generation * self.run.generations as u64 + bootstrap_steps;
        let schedule = match t.schedule.as_str() {
            "constant" => LrSchedule::Constant,
            "cosine" => LrSchedule::Cosine {
                total_steps: total,
                min_lr: t.min_lr,
            },
            "step" => LrSchedule::Step {
                milestones: vec![total / 2, total * 3 / 4],
                gamma: 0.1,
            },
            o => {
                return Err(format!(
                    "[train] schedule `{o}`: expected constant, cosine or step"
                ))
            }
        };
        Ok(TrainConfig {
            optimizer: t.optimizer,
            lr: t.lr,
            momentum: t.momentum,
            l2: t.l2,
            grad_clip: t.grad_clip,
            warmup_steps: t.warmup_steps,
            schedule,
            ..TrainConfig::default()
        })
    }

    pub fn validate(&self) -> Result<(), String> {
        self.variant()?;
        self.net_config()?;
        self.train_config()?;
        halatafl_nn::parse_device(&self.run.device).map_err(|e| format!("[run] device: {e}"))?;
        self.network
            .precision
            .parse::<halatafl_nn::Precision>()
            .map_err(|e| format!("[network] precision: {e}"))?;
        if !matches!(self.search.algorithm.as_str(), "puct" | "gumbel") {
            return Err(format!(
                "[search] algorithm `{}`: expected puct or gumbel",
                self.search.algorithm
            ));
        }
        let b = &self.bootstrap;
        if b.enabled() && (b.agent.starts_with("net") || b.agent.trim().is_empty()) {
            return Err(format!(
                "[bootstrap] agent `{}`: the expert must be a non-network agent, e.g. alphabeta:depth=4",
                b.agent
            ));
        }
        let checks: [(bool, &str); 12] = [
            (
                !b.enabled() || b.steps >= 1,
                "[bootstrap] steps must be at least 1 when games > 0",
            ),
            (
                (0.0..=1.0).contains(&b.replay_fraction),
                "[bootstrap] replay_fraction must be in [0, 1]",
            ),
            (
                self.run.generations >= 1,
                "[run] generations must be at least 1",
            ),
            (self.run.threads >= 1, "[run] threads must be at least 1"),
            (
                self.search.simulations >= 1,
                "[search] simulations must be at least 1",
            ),
            (
                self.search.fast_simulations >= 1,
                "[search] fast_simulations must be at least 1",
            ),
            (
                (0.0..=1.0).contains(&self.search.full_search_probability)
                    && self.search.full_search_probability > 0.0,
                "[search] full_search_probability must be in (0, 1]",
            ),
            (
                self.selfplay.games >= 1 && self.selfplay.concurrent_games >= 1,
                "[selfplay] games and concurrent_games must be at least 1",
            ),
            (
                (0.0..=1.0).contains(&self.selfplay.resign_playout_fraction),
                "[selfplay] resign_playout_fraction must be in [0, 1]",
            ),
            (
                self.train.batch_size >= 1 && self.train.log_every >= 1,
                "[train] batch_size and log_every must be at least 1",
            ),
            (
                self.replay.window_generations >= 1,
                "[replay] window_generations must be at least 1",
            ),
            (self.eval.every >= 1, "[eval] every must be at least 1"),
        ];
        for (ok, why) in checks {
            if !ok {
                return Err(why.to_string());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_config_is_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                RunConfig::load(&path).unwrap();
                seen += 1;
            }
        }
        assert!(seen >= 4, "quick, default, classic and ci configs");
    }

    #[test]
    fn unknown_keys_are_named_and_defaults_round_trip() {
        let err =
            RunConfig::from_toml("[search]\nsimulatons = 5\n", Path::new("x.toml")).unwrap_err();
        assert!(
            err.contains("simulatons") && err.contains("x.toml"),
            "{err}"
        );
        let err = RunConfig::from_toml("[serch]\n", Path::new("x.toml")).unwrap_err();
        assert!(err.contains("serch"), "{err}");
        let c = RunConfig::default();
        assert_eq!(
            RunConfig::from_toml(&c.to_toml(), Path::new("y")).unwrap(),
            c
        );
        let err =
            RunConfig::from_toml("[game]\nvariant = \"chess\"\n", Path::new("z")).unwrap_err();
        assert!(err.contains("chess"), "{err}");
    }
}
