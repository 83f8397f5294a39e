//! Network agents: `net:ckpt=PATH,sims=N` (MCTS guided by the network) and
//! `net:ckpt=PATH,sims=0` (the raw policy: the move with the highest prior);
//! `ms=T` instead of `sims` searches for T milliseconds per move.
//! Agents built from the same checkpoint share one [`NetEvaluator`] through a
//! [`NetRegistry`], so parallel arena games batch into one inference thread.

use crate::checkpoint;
use crate::config::NetConfig;
use crate::inference::{Precision, PrecisionChoice, PreparedNet};
use crate::inference_server::{EvaluatorConfig, NetEvaluator};
use crate::targets::AuxTarget;
use halatafl_agent::{Agent, AgentSpec, Budget, Decision, SearchInfo, SpecError};
use halatafl_mcts::{from_spec, Evaluator, MctsAgent};
use halatafl_rules::{Game, Variant};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Options of `net:` besides the `mcts:` ones.
pub const NET_OPTIONS: &[(&str, &str)] = &[
    (
        "ckpt",
        "checkpoint file (.safetensors) written by `halatafl train`",
    ),
    (
        "sims",
        "simulations per move; 0 plays the raw policy (default 0)",
    ),
    (
        "ms",
        "milliseconds of search per move (with sims: whichever ends first)",
    ),
    ("device", "cpu (default), cuda, cuda:N or auto"),
    (
        "precision",
        "f32 (default), bf16, or auto (the faster here, timed when the network loads)",
    ),
    (
        "moves_left",
        "moves-left utility of the search, 0 to 1 (default 0: off; needs a network with a moves-left head)",
    ),
];

/// The `net:` spec's syntax in one line: the help text [`AgentSpec::parse`]
/// shows with a bad spec.
pub fn net_forms() -> String {
    "net:ckpt=PATH[,sims=N|ms=T][,device=cpu|cuda][,precision=f32|bf16|auto][,any mcts option]"
        .to_string()
}

/// The most a `moves_left=` utility may be: values lie in [-1, 1], and a
/// bonus beyond 1 would outweigh the win itself.
pub const MAX_MOVES_LEFT_UTILITY: f32 = 1.0;

/// The agent kinds that play a network: they need a checkpoint and the
/// variant it was trained on. Everything that must tell network agents from
/// the others (the expert, the self-play opponent) decides by the parsed
/// kind, not by how the spec's text begins.
pub const NETWORK_KINDS: [&str; 2] = ["net", "best"];

/// The network kind `spec` names (`net` or `best`), or `None` for any other
/// agent; a spec that does not parse names none (its builder reports why).
pub fn network_kind(spec: &str) -> Option<&'static str> {
    let parsed = AgentSpec::parse(spec, "").ok()?;
    NETWORK_KINDS.into_iter().find(|k| *k == parsed.kind)
}

/// Whether `spec` names a network agent (`net:...`, `best...`).
pub fn is_network_spec(spec: &str) -> bool {
    network_kind(spec).is_some()
}

/// The variant the shipped network was trained on (its file predates the
/// `variant` entry every run now writes into its checkpoints).
pub const SHIPPED_NETWORK_VARIANT: &str = "two-foxes";

/// The variant a checkpoint's network was trained on, as `Variant`'s Display
/// (`two-foxes`, `classic geese=13`), from its `variant` metadata entry;
/// `None` for checkpoints written before runs recorded it.
pub fn trained_variant(info: &checkpoint::CheckpointInfo) -> Option<&str> {
    info.extra.get(checkpoint::VARIANT_KEY).map(String::as_str)
}

/// Refuses a network trained on another variant than `variant`, naming
/// both: `network` names it in the message, `trained` is what its
/// checkpoint records ([`trained_variant`]; `None` plays any variant).
pub fn check_trained_variant(
    network: &str,
    trained: Option<&str>,
    variant: Variant,
) -> Result<(), String> {
    match trained {
        Some(trained) if trained != variant.to_string() => Err(format!(
            "the network {network} was trained on {trained}, and this game is {variant}: \
             a network plays the variant it was trained on"
        )),
        _ => Ok(()),
    }
}

/// The batch an agent's `precision=auto` is timed at: a match game's search
/// sends its leaves per tree (a few) per call, and the games that share a
/// network in parallel add theirs, so calls are small.
pub const AGENT_TRIAL_BATCH: usize = 8;

/// A network loaded once and shared.
#[derive(Clone)]
struct Shared {
    evaluator: Arc<NetEvaluator>,
    config: NetConfig,
    variant: Option<String>,
}

/// Shares evaluators between agents of the same checkpoint, device and precision.
#[derive(Default)]
pub struct NetRegistry {
    evaluators: Mutex<HashMap<String, Shared>>,
    /// How every evaluator this registry starts batches and caches.
    pub config: EvaluatorConfig,
}

impl NetRegistry {
    /// An empty registry whose evaluators will run with `config`.
    pub fn new(config: EvaluatorConfig) -> NetRegistry {
        NetRegistry {
            evaluators: Mutex::new(HashMap::new()),
            config,
        }
    }

    /// The shared evaluator of a checkpoint, loading it on first use.
    pub fn evaluator(
        &self,
        source: NetSource,
        device: &str,
        precision: impl Into<PrecisionChoice>,
    ) -> Result<Arc<NetEvaluator>, String> {
        self.network(source, device, precision).map(|(e, _)| e)
    }

    /// [`NetRegistry::evaluator`] with the network's shape (which heads it has).
    pub fn network(
        &self,
        source: NetSource,
        device: &str,
        precision: impl Into<PrecisionChoice>,
    ) -> Result<(Arc<NetEvaluator>, NetConfig), String> {
        self.shared(source, device, precision.into())
            .map(|s| (s.evaluator, s.config))
    }

    /// [`NetRegistry::network`] for games of `variant`: a network trained
    /// on another variant is refused, naming both. Network agents and the
    /// analysis board take their networks through here.
    pub fn network_for(
        &self,
        source: NetSource,
        device: &str,
        precision: impl Into<PrecisionChoice>,
        variant: Variant,
    ) -> Result<(Arc<NetEvaluator>, NetConfig), String> {
        let shared = self.shared(source, device, precision.into())?;
        let name = match source {
            NetSource::File(path) => path.display().to_string(),
            NetSource::Shipped => SHIPPED_NETWORK_NAME.to_string(),
        };
        check_trained_variant(&name, shared.variant.as_deref(), variant)?;
        Ok((shared.evaluator, shared.config))
    }

    /// The shared network of a checkpoint, loaded on first use.
    fn shared(
        &self,
        source: NetSource,
        device: &str,
        precision: PrecisionChoice,
    ) -> Result<Shared, String> {
        let name = match source {
            NetSource::File(path) => path.display().to_string(),
            NetSource::Shipped => format!("<shipped {SHIPPED_NETWORK_NAME}>"),
        };
        let key = format!("{name}|{device}|{precision}");
        let mut map = self.evaluators.lock().expect("registry lock");
        if let Some(shared) = map.get(&key) {
            return Ok(shared.clone());
        }
        let device = crate::parse_device(device).map_err(|e| e.to_string())?;
        let (trainer, info) = match source {
            NetSource::File(path) => checkpoint::load(path, None, device),
            NetSource::Shipped => checkpoint::load_bytes(
                Path::new(SHIPPED_NETWORK_NAME),
                SHIPPED_NETWORK,
                None,
                device,
            ),
        }
        .map_err(|e| e.to_string())?;
        let variant = match source {
            NetSource::File(_) => trained_variant(&info).map(str::to_string),
            NetSource::Shipped => Some(
                trained_variant(&info)
                    .unwrap_or(SHIPPED_NETWORK_VARIANT)
                    .to_string(),
            ),
        };
        let net = PreparedNet::new(&trainer.net, precision, device, AGENT_TRIAL_BATCH);
        let shared = Shared {
            evaluator: Arc::new(NetEvaluator::start(move || net.settle(), self.config)),
            config: trainer.net.config,
            variant,
        };
        map.insert(key, shared.clone());
        Ok(shared)
    }

    /// Drops every shared evaluator (their threads end when the last agent goes).
    pub fn clear(&self) {
        self.evaluators.lock().expect("registry lock").clear();
    }
}

/// The network shipped with the workbench, `models/best.safetensors` of the
/// repository, built into the binary so that `best` plays the same network
/// wherever the binary is run (`models/README.md` says how it was trained).
pub const SHIPPED_NETWORK: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../models/best.safetensors"
));

/// The shipped network's file in the repository, for messages.
pub const SHIPPED_NETWORK_NAME: &str = "models/best.safetensors";

/// Where a network agent's weights come from.
#[derive(Clone, Copy, Debug)]
pub enum NetSource<'a> {
    /// A checkpoint file (`net:ckpt=PATH`).
    File(&'a Path),
    /// [`SHIPPED_NETWORK`] (`best`).
    Shipped,
}

/// Builds a `net:` agent for games of `variant`; a network trained on
/// another variant is refused, naming both.
pub fn build_net_agent(
    spec: &AgentSpec,
    seed: u64,
    variant: Variant,
    registry: &NetRegistry,
) -> Result<Box<dyn Agent>, SpecError> {
    let ckpt: String = spec.get("ckpt")?.ok_or_else(|| SpecError::Syntax {
        spec: spec.to_string(),
        why: "`ckpt=PATH` is required".into(),
        forms: net_forms(),
    })?;
    build_agent_from(
        spec,
        seed,
        variant,
        registry,
        NetSource::File(Path::new(&ckpt)),
    )
}

/// Builds a `best` agent: the shipped network, with a `net:` agent's
/// options except `ckpt` (`best`, `best:ms=100`, `best:sims=200`).
pub fn build_shipped_agent(
    spec: &AgentSpec,
    seed: u64,
    variant: Variant,
    registry: &NetRegistry,
) -> Result<Box<dyn Agent>, SpecError> {
    build_agent_from(spec, seed, variant, registry, NetSource::Shipped)
}

fn build_agent_from(
    spec: &AgentSpec,
    seed: u64,
    variant: Variant,
    registry: &NetRegistry,
    source: NetSource,
) -> Result<Box<dyn Agent>, SpecError> {
    // `ckpt` names the source of a `net:` agent only.
    let options = || {
        NET_OPTIONS
            .iter()
            .map(|(k, _)| *k)
            .filter(move |k| matches!(source, NetSource::File(_)) || *k != "ckpt")
    };
    let sims: u32 = spec.get_or("sims", 0)?;
    // `ms=` alone means a timed search; `sims=0` (or neither) the raw policy.
    let raw_policy = sims == 0 && !spec.params.contains_key("ms");
    let device: String = spec.get_or("device", "cpu".to_string())?;
    let precision: PrecisionChoice =
        spec.get_or("precision", PrecisionChoice::Fixed(Precision::F32))?;
    let (evaluator, net_config) = registry
        .network_for(source, &device, precision, variant)
        .map_err(|why| SpecError::Build {
            spec: spec.to_string(),
            why,
        })?;
    if raw_policy {
        // The utility steers a search; the raw policy has none.
        let known: Vec<&str> = options().filter(|k| *k != "moves_left").collect();
        spec.check_keys(&known)?;
        return Ok(Box::new(PolicyAgent {
            spec: spec.to_string(),
            evaluator,
        }));
    }
    let extra: Vec<&str> = options().filter(|k| !["sims", "ms"].contains(k)).collect();
    let mut parsed = from_spec(spec, &extra)?;
    let utility: f32 = spec.get_or("moves_left", 0.0)?;
    let bad_utility = |why: String| SpecError::BadValue {
        spec: spec.to_string(),
        key: "moves_left".into(),
        value: spec.params.get("moves_left").cloned().unwrap_or_default(),
        why,
    };
    if !(0.0..=MAX_MOVES_LEFT_UTILITY).contains(&utility) {
        return Err(bad_utility(format!(
            "must be a number from 0 to {MAX_MOVES_LEFT_UTILITY}"
        )));
    }
    if utility > 0.0 && !net_config.heads.has(AuxTarget::MovesLeft) {
        return Err(bad_utility(
            "the network has no moves-left head (train one with `[network] moves_left_head = true`)"
                .into(),
        ));
    }
    parsed.config.moves_left_utility = utility;
    let evaluator: Arc<dyn Evaluator<Game>> = evaluator;
    let mut agent =
        MctsAgent::new(spec.to_string(), parsed.config, evaluator).with_movetime(parsed.movetime);
    agent.new_game(seed);
    Ok(Box::new(agent))
}

/// Plays the move the network's policy likes best, with no search.
pub struct PolicyAgent {
    spec: String,
    evaluator: Arc<NetEvaluator>,
}

impl Agent for PolicyAgent {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn choose(&mut self, game: &Game, _budget: &Budget) -> Decision {
        let position = game.position();
        let moves = position.legal_moves();
        let (priors, wdl) = self
            .evaluator
            .evaluate_position(position, game.repetitions() as u8);
        let best = priors
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.partial_cmp(b.1).unwrap_or(std::cmp::Ordering::Equal))
            .map(|(i, _)| i)
            .expect("a position to move in has legal moves");
        Decision {
            mv: moves[best],
            value: Some(wdl.q()),
            info: SearchInfo {
                depth: 0,
                nodes: 1,
                pv: vec![moves[best]],
                extra: format!("prior {:.3}", priors[best]),
            },
        }
    }

    fn new_game(&mut self, _seed: u64) {}
}
