//! `mcts:` agent specs: `mcts:sims=N[,key=value...]`.

use crate::config::{MctsConfig, RootMode};
use halatafl_agent::{AgentSpec, SpecError, MAX_MOVETIME_MS};

/// The most simulations per move a spec or a budget may ask for. The tree
/// grows with every simulation (a few hundred bytes each), so ten million is
/// already gigabytes; more would exhaust memory before it finished.
pub const MAX_SIMS: u32 = 10_000_000;

/// Every option of an `mcts:` spec, with what it sets.
pub const MCTS_OPTIONS: &[(&str, &str)] = &[
    (
        "sims",
        "simulations per move, 1 to 10000000 (default 800; with `ms`, an upper bound, default 1000000)",
    ),
    (
        "ms",
        "thinking time per move in milliseconds, at most 86400000 (one day) (stops at `ms` or `sims`, whichever comes first)",
    ),
    (
        "eval",
        "leaf evaluation without a network: `rollout` (default) or `uniform`",
    ),
    (
        "rollout_plies",
        "longest random playout, then a draw (default 400)",
    ),
    ("cpuct", "PUCT c_init (default 1.25)"),
    ("cbase", "PUCT c_base (default 19652)"),
    ("fpu", "first-play-urgency reduction (default 0.25)"),
    (
        "batch",
        "leaves per evaluator call, spread by virtual loss (default 1)",
    ),
    ("vloss", "virtual loss per pending leaf (default 1)"),
    ("gumbel", "`true`: Gumbel root search instead of PUCT"),
    ("m", "Gumbel: actions sampled at the root (default 16)"),
    ("cvisit", "Gumbel: c_visit (default 50)"),
    ("cscale", "Gumbel: c_scale (default 0.1)"),
    (
        "noise",
        "`true`: root noise (Dirichlet, or Gumbel samples) (default false)",
    ),
    (
        "alpha",
        "Dirichlet alpha times the number of legal moves (default 10)",
    ),
    ("eps", "Dirichlet noise share (default 0.25)"),
    ("temp", "move-choice temperature (default 1)"),
    (
        "temp_plies",
        "game plies that use `temp`, then the best move (default 0)",
    ),
    (
        "reuse",
        "`false`: rebuild the tree every move (default true)",
    ),
];

/// How leaves are evaluated when no network is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafEval {
    /// Uniform priors and one random playout per leaf (classic MCTS).
    Rollout { max_plies: u32 },
    /// Uniform priors and a draw value: the bare tree.
    Uniform,
}

/// An `mcts:` spec parsed: the search settings and the network-free evaluator.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsSpec {
    pub config: MctsConfig,
    pub eval: LeafEval,
    /// `ms=`: the agent's own time per move (a caller's budget overrides it).
    pub movetime: Option<std::time::Duration>,
}

/// Parses an `mcts:` spec. `extra_keys` are further keys the caller handles
/// itself (a network agent's `net=...`); any other unknown key is an error
/// listing the options.
pub fn from_spec(spec: &AgentSpec, extra_keys: &[&str]) -> Result<MctsSpec, SpecError> {
    let mut known: Vec<&str> = MCTS_OPTIONS.iter().map(|(k, _)| *k).collect();
    known.extend_from_slice(extra_keys);
    spec.check_keys(&known)?;
    let bad = |key: &str, why: &str| SpecError::BadValue {
        spec: spec.to_string(),
        key: key.to_string(),
        value: spec.params.get(key).cloned().unwrap_or_default(),
        why: why.to_string(),
    };
    let mut c = MctsConfig::default();
    let ms: Option<u64> = spec.get("ms")?;
    if ms.is_some_and(|ms| !(1..=MAX_MOVETIME_MS).contains(&ms)) {
        return Err(bad(
            "ms",
            &format!("must be from 1 to {MAX_MOVETIME_MS} (one day)"),
        ));
    }
    if ms.is_some() {
        // A time budget: the simulation count only bounds the tree's size.
        c.sims = 1_000_000;
    }
    c.sims = spec.get_or("sims", c.sims)?;
    if !(1..=MAX_SIMS).contains(&c.sims) {
        return Err(bad("sims", &format!("must be from 1 to {MAX_SIMS}")));
    }
    let positive = |key: &str, default: f32| -> Result<f32, SpecError> {
        let v: f32 = spec.get_or(key, default)?;
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(bad(key, "must be a positive number"))
        }
    };
    let non_negative = |key: &str, default: f32| -> Result<f32, SpecError> {
        let v: f32 = spec.get_or(key, default)?;
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(bad(key, "must be a number >= 0"))
        }
    };
    c.cpuct = positive("cpuct", c.cpuct)?;
    c.cpuct_base = positive("cbase", c.cpuct_base)?;
    c.fpu_reduction = non_negative("fpu", c.fpu_reduction)?;
    c.batch_size = spec.get_or("batch", c.batch_size)?;
    if !(1..=4096).contains(&c.batch_size) {
        return Err(bad("batch", "must be between 1 and 4096"));
    }
    c.virtual_loss = non_negative("vloss", c.virtual_loss)?;
    if spec.get_or("gumbel", false)? {
        c.root = RootMode::Gumbel;
    }
    c.gumbel_m = spec.get_or("m", c.gumbel_m)?;
    if c.gumbel_m == 0 {
        return Err(bad("m", "must be at least 1"));
    }
    c.gumbel_c_visit = non_negative("cvisit", c.gumbel_c_visit)?;
    c.gumbel_c_scale = non_negative("cscale", c.gumbel_c_scale)?;
    c.noise = spec.get_or("noise", c.noise)?;
    c.dirichlet_alpha_scale = positive("alpha", c.dirichlet_alpha_scale)?;
    c.dirichlet_epsilon = non_negative("eps", c.dirichlet_epsilon)?;
    if c.dirichlet_epsilon > 1.0 {
        return Err(bad("eps", "must be between 0 and 1"));
    }
    c.temperature = non_negative("temp", c.temperature)?;
    c.temperature_plies = spec.get_or("temp_plies", c.temperature_plies)?;
    c.reuse_tree = spec.get_or("reuse", c.reuse_tree)?;
    let eval = match spec.params.get("eval").map(String::as_str) {
        None | Some("rollout") => LeafEval::Rollout {
            max_plies: spec.get_or("rollout_plies", 400u32)?,
        },
        Some("uniform") => LeafEval::Uniform,
        Some(_) => return Err(bad("eval", "expected `rollout` or `uniform`")),
    };
    Ok(MctsSpec {
        config: c,
        eval,
        movetime: ms.map(std::time::Duration::from_millis),
    })
}

/// The help line for `mcts` in agent-spec error messages.
pub fn spec_forms() -> String {
    let keys: Vec<&str> = MCTS_OPTIONS.iter().map(|(k, _)| *k).collect();
    format!("mcts:sims=N[,{}]", keys.join("=..,") + "=..")
}
