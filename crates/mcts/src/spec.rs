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
    (
        "material",
        "material utility, 0 to below 1: values mixed with the geese taken or kept since the root, and those a geese-taken head predicts to the end (default 0)",
    ),
    (
        "captures",
        "plies of a capture search at each new leaf, 0 to 6, with `material` > 0: where no geese-taken head predicts, the geese it takes count as the leaf's prediction (default 0)",
    ),
    (
        "material_eval",
        "`true`: the material utility counts alpha-beta's evaluation, in geese, rather than the geese alone, with `material` > 0 (default false)",
    ),
    (
        "room",
        "geese a point of the foxes' room is worth in the material utility's count, 0 to 4, with `material` > 0: the geese gain by walling the foxes in (default 0)",
    ),
    (
        "geese_draw",
        "what a draw is worth to the geese, above -1 and below 1; the foxes count it at minus that, so below 0 the geese avoid repetitions and the foxes seek them (default 0)",
    ),
    (
        "cheapest_win",
        "`true`: with the root proven won, search on for other proven wins and play the one whose proof keeps the most material, the geese kept or taken (default false)",
    ),
];

/// How leaves are evaluated when no network is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafEval {
    /// Uniform priors and one random playout per leaf (classic MCTS).
    Rollout {
        /// `rollout_plies=`: the longest playout, after which it counts as a
        /// draw.
        max_plies: u32,
    },
    /// Uniform priors and a draw value: the bare tree.
    Uniform,
}

/// An `mcts:` spec parsed: the search settings and the network-free evaluator.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsSpec {
    /// The search settings: [`MctsConfig`]'s defaults with the spec's keys
    /// applied.
    pub config: MctsConfig,
    /// `eval=`: the evaluator used when no network is given.
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
    c.material_utility = non_negative("material", c.material_utility)?;
    if c.material_utility >= 1.0 {
        return Err(bad(
            "material",
            "must be at least 0 and below 1 (1 would ignore the result)",
        ));
    }
    c.capture_plies = spec.get_or("captures", c.capture_plies)?;
    if c.capture_plies > crate::MAX_CAPTURE_PLIES {
        return Err(bad(
            "captures",
            &format!("must be from 0 to {}", crate::MAX_CAPTURE_PLIES),
        ));
    }
    c.material_eval = spec.get_or("material_eval", c.material_eval)?;
    c.room_weight = spec.get_or("room", c.room_weight)?;
    if !(0.0..=crate::MAX_ROOM_WEIGHT).contains(&c.room_weight) {
        return Err(bad(
            "room",
            &format!(
                "must be from 0 to {} (geese a point)",
                crate::MAX_ROOM_WEIGHT
            ),
        ));
    }
    // The capture search, the evaluation and the room act only through
    // the material utility: without it each key would be silently ignored.
    for (key, on) in [
        ("captures", c.capture_plies > 0),
        ("material_eval", c.material_eval),
        ("room", c.room_weight > 0.0),
    ] {
        if on && c.material_utility == 0.0 {
            return Err(bad(
                key,
                "counts through the material utility: give `material=m` (m > 0) too",
            ));
        }
    }
    c.geese_draw = spec.get_or("geese_draw", c.geese_draw)?;
    if !(c.geese_draw > -1.0 && c.geese_draw < 1.0) {
        return Err(bad(
            "geese_draw",
            "must be above -1 and below 1 (a draw worth a win or a loss is not a draw)",
        ));
    }
    c.cheapest_win = spec.get_or("cheapest_win", c.cheapest_win)?;
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

/// The spec options that make [`from_spec`] give `config`: `key=value` for
/// every setting that differs from [`MctsConfig::default`], in
/// [`MCTS_OPTIONS`] order, leaving out the keys in `skip` (those a caller
/// writes itself; `sims` is never written, the caller always gives it). Noise settings are written only with the noise
/// on, Gumbel settings only with the Gumbel root, where they act. A run's
/// evaluation agent is written this way, so its spec (and its name in the
/// CSVs) carries the search the run's config asked for.
pub fn spec_options(config: &MctsConfig, skip: &[&str]) -> Vec<String> {
    let d = MctsConfig::default();
    let c = config;
    let gumbel = c.root == RootMode::Gumbel;
    let mut out = Vec::new();
    // Called in MCTS_OPTIONS order, so equal configs give equal specs.
    let mut put = |key: &str, differs: bool, value: &dyn std::fmt::Display| {
        if differs && !skip.contains(&key) {
            out.push(format!("{key}={value}"));
        }
    };
    put("cpuct", c.cpuct != d.cpuct, &c.cpuct);
    put("cbase", c.cpuct_base != d.cpuct_base, &c.cpuct_base);
    put("fpu", c.fpu_reduction != d.fpu_reduction, &c.fpu_reduction);
    put("batch", c.batch_size != d.batch_size, &c.batch_size);
    put("vloss", c.virtual_loss != d.virtual_loss, &c.virtual_loss);
    put("gumbel", gumbel, &true);
    put("m", gumbel && c.gumbel_m != d.gumbel_m, &c.gumbel_m);
    let visit = gumbel && c.gumbel_c_visit != d.gumbel_c_visit;
    put("cvisit", visit, &c.gumbel_c_visit);
    let scale = gumbel && c.gumbel_c_scale != d.gumbel_c_scale;
    put("cscale", scale, &c.gumbel_c_scale);
    put("noise", c.noise != d.noise, &c.noise);
    let alpha = c.noise && c.dirichlet_alpha_scale != d.dirichlet_alpha_scale;
    put("alpha", alpha, &c.dirichlet_alpha_scale);
    let eps = c.noise && c.dirichlet_epsilon != d.dirichlet_epsilon;
    put("eps", eps, &c.dirichlet_epsilon);
    let temp = c.temperature_plies > 0 && c.temperature != d.temperature;
    put("temp", temp, &c.temperature);
    put(
        "temp_plies",
        c.temperature_plies != d.temperature_plies,
        &c.temperature_plies,
    );
    put("reuse", c.reuse_tree != d.reuse_tree, &c.reuse_tree);
    put(
        "material",
        c.material_utility != d.material_utility,
        &c.material_utility,
    );
    put(
        "captures",
        c.capture_plies != d.capture_plies,
        &c.capture_plies,
    );
    put(
        "material_eval",
        c.material_eval != d.material_eval,
        &c.material_eval,
    );
    put("room", c.room_weight != d.room_weight, &c.room_weight);
    put("geese_draw", c.geese_draw != d.geese_draw, &c.geese_draw);
    put(
        "cheapest_win",
        c.cheapest_win != d.cheapest_win,
        &c.cheapest_win,
    );
    out
}

/// The help line for `mcts` in agent-spec error messages.
pub fn spec_forms() -> String {
    let keys: Vec<&str> = MCTS_OPTIONS.iter().map(|(k, _)| *k).collect();
    format!("mcts:sims=N[,{}]", keys.join("=..,") + "=..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(options: &[String]) -> MctsConfig {
        let text = std::iter::once("sims=64".to_string())
            .chain(options.iter().cloned())
            .collect::<Vec<_>>()
            .join(",");
        let spec = AgentSpec::parse(&format!("mcts:{text}"), "").unwrap();
        from_spec(&spec, &[]).unwrap().config
    }

    #[test]
    fn spec_options_give_back_the_config_they_were_written_from() {
        let plain = MctsConfig {
            sims: 64,
            ..MctsConfig::default()
        };
        assert!(spec_options(&plain, &["sims"]).is_empty());
        assert_eq!(parse(&spec_options(&plain, &["sims"])), plain);
        let searched = MctsConfig {
            sims: 64,
            root: RootMode::Gumbel,
            cpuct: 2.5,
            fpu_reduction: 0.1,
            batch_size: 4,
            gumbel_m: 8,
            noise: true,
            dirichlet_epsilon: 0.3,
            temperature: 0.7,
            temperature_plies: 12,
            reuse_tree: false,
            material_utility: 0.2,
            capture_plies: 3,
            material_eval: true,
            room_weight: 0.25,
            geese_draw: -0.25,
            cheapest_win: true,
            ..MctsConfig::default()
        };
        let options = spec_options(&searched, &["sims"]);
        assert_eq!(
            options.join(","),
            "cpuct=2.5,fpu=0.1,batch=4,gumbel=true,m=8,noise=true,eps=0.3,temp=0.7,temp_plies=12,reuse=false,material=0.2,captures=3,material_eval=true,room=0.25,geese_draw=-0.25,cheapest_win=true"
        );
        assert_eq!(parse(&options), searched);
        assert!(!spec_options(&searched, &["sims", "batch"])
            .join(",")
            .contains("batch"));
    }

    #[test]
    fn material_utility_must_leave_the_result_a_share() {
        let parse = |text: &str| from_spec(&AgentSpec::parse(text, "").unwrap(), &[]);
        assert_eq!(
            parse("mcts:material=0.3").unwrap().config.material_utility,
            0.3
        );
        for bad in ["mcts:material=1", "mcts:material=-0.1", "mcts:material=nan"] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains("material"), "{bad}: {err}");
        }
    }

    #[test]
    fn captures_and_the_evaluation_need_the_material_utility() {
        let parse = |text: &str| from_spec(&AgentSpec::parse(text, "").unwrap(), &[]);
        let ok = parse("mcts:material=0.3,captures=3").unwrap().config;
        assert_eq!((ok.capture_plies, ok.material_utility), (3, 0.3));
        assert_eq!(parse("mcts:captures=0").unwrap().config.capture_plies, 0);
        let ok = parse("mcts:material=0.3,material_eval=true")
            .unwrap()
            .config;
        assert!(ok.material_eval);
        for (bad, why) in [
            ("mcts:captures=3", "give `material=m`"),
            ("mcts:material=0.3,captures=7", "from 0 to 6"),
            ("mcts:material=0.3,captures=-1", "captures"),
            ("mcts:material_eval=true", "give `material=m`"),
            ("mcts:room=0.25", "give `material=m`"),
            ("mcts:material=0.3,room=5", "from 0 to 4"),
            ("mcts:material=0.3,room=nan", "from 0 to 4"),
            ("mcts:material=0.3,room=-1", "from 0 to 4"),
            ("mcts:material=0.3,material_eval=2", "material_eval"),
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn a_draw_is_worth_less_than_a_win_and_more_than_a_loss() {
        let parse = |text: &str| from_spec(&AgentSpec::parse(text, "").unwrap(), &[]);
        assert_eq!(
            parse("mcts:geese_draw=-0.2").unwrap().config.geese_draw,
            -0.2
        );
        for bad in ["1", "-1", "1.5", "nan", "inf", "x"] {
            let text = format!("mcts:geese_draw={bad}");
            let err = parse(&text).unwrap_err().to_string();
            assert!(err.contains("geese_draw"), "{text}: {err}");
        }
    }

    /// The defaults the options' help states are the config's own.
    #[test]
    fn the_help_states_the_defaults_of_the_config() {
        let d = MctsConfig::default();
        let stated = |key: &str| {
            let (_, help) = MCTS_OPTIONS.iter().find(|(k, _)| *k == key).unwrap();
            let start = help.find("(default ").unwrap() + "(default ".len();
            help[start..].split([')', ';']).next().unwrap().to_string()
        };
        for (key, value) in [
            ("sims", d.sims.to_string()),
            ("cpuct", d.cpuct.to_string()),
            ("cbase", d.cpuct_base.to_string()),
            ("fpu", d.fpu_reduction.to_string()),
            ("batch", d.batch_size.to_string()),
            ("vloss", d.virtual_loss.to_string()),
            ("m", d.gumbel_m.to_string()),
            ("cvisit", d.gumbel_c_visit.to_string()),
            ("cscale", d.gumbel_c_scale.to_string()),
            ("noise", d.noise.to_string()),
            ("alpha", d.dirichlet_alpha_scale.to_string()),
            ("eps", d.dirichlet_epsilon.to_string()),
            ("temp", d.temperature.to_string()),
            ("temp_plies", d.temperature_plies.to_string()),
            ("reuse", d.reuse_tree.to_string()),
            ("material", d.material_utility.to_string()),
            ("captures", d.capture_plies.to_string()),
            ("material_eval", d.material_eval.to_string()),
            ("room", d.room_weight.to_string()),
            ("geese_draw", d.geese_draw.to_string()),
            ("cheapest_win", d.cheapest_win.to_string()),
        ] {
            assert_eq!(stated(key), value, "{key}");
        }
    }
}
