//! Building agents from spec strings: the one place that knows every kind.

use halatafl_agent::{Agent, AgentSpec, RandomAgent, SpecError};
use halatafl_alphabeta::AlphaBeta;
use halatafl_rules::Variant;

/// The valid spec forms, shown with every spec error and in `--help`.
pub const AGENT_FORMS: &str = "valid agent specs:
  random                                  uniformly random legal moves
  alphabeta[:depth=D][,ms=T][,tt=MiB]     alpha-beta search: D plies (1-100, default 6)
                                          and/or T ms per move (iterative deepening),
                                          table of MiB (default 16)
                                          e.g. alphabeta:depth=6, alphabeta:ms=200
  mcts[:sims=N][,key=value...]            Monte Carlo tree search, N simulations per move
                                          (1-10000000, default 800) with random playouts;
                                          ms=T searches T ms per move; keys: eval
                                          (rollout|uniform), rollout_plies, cpuct, cbase,
                                          fpu, batch, vloss, gumbel=true, m, cvisit, cscale,
                                          noise, alpha, eps, temp, temp_plies, reuse,
                                          material, captures, material_eval, room,
                                          geese_draw, cheapest_win
                                          e.g. mcts:sims=2000, mcts:sims=200,gumbel=true
  net:ckpt=PATH[,sims=N|ms=T][,device=cpu|cuda][,precision=f32|bf16|auto][,mcts options]
                                          a trained network: MCTS with N simulations
                                          guided by it, or its raw policy with sims=0
  best[:sims=N|ms=T][,net options]        the network shipped in models/ (built into the
                                          binary), e.g. best:ms=100; raw policy by default
  any of these with prove=N               first a root proof search of N df-pn nodes: a
                                          proven win is played at once (classic Fox and
                                          Geese without sideways steps only)";

/// Network agents of one process share one inference server per checkpoint;
/// front ends that evaluate positions themselves (the analysis board) take
/// their networks from here too, so a network is loaded once per process.
pub fn net_registry() -> &'static halatafl_nn::NetRegistry {
    static REGISTRY: std::sync::OnceLock<halatafl_nn::NetRegistry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| halatafl_nn::NetRegistry::new(halatafl_nn::EvaluatorConfig::default()))
}

/// Builds the agent `spec` names, seeded with `seed`, for games of `variant`.
pub fn build_agent(spec: &str, seed: u64, variant: Variant) -> Result<Box<dyn Agent>, SpecError> {
    // Search agents play any variant; network agents check theirs.
    let mut parsed = AgentSpec::parse(spec, AGENT_FORMS)?;
    // `prove=N` wraps any kind; the kind's own builder never sees it.
    let prove: Option<u64> = parsed.get("prove")?;
    let full = parsed.to_string();
    parsed.params.remove("prove");
    let agent = build_kind(&parsed, seed, variant)?;
    match prove {
        None => Ok(agent),
        Some(nodes) => halatafl_solver::ProvingAgent::new(agent, nodes, full.clone(), variant)
            .map(|a| Box::new(a) as Box<dyn Agent>)
            .map_err(|why| SpecError::BadValue {
                spec: full,
                key: "prove".into(),
                value: nodes.to_string(),
                why,
            }),
    }
}

/// The agent of `parsed`'s kind.
fn build_kind(
    parsed: &AgentSpec,
    seed: u64,
    variant: Variant,
) -> Result<Box<dyn Agent>, SpecError> {
    match parsed.kind.as_str() {
        "random" => {
            parsed.check_keys(&[])?;
            Ok(Box::new(RandomAgent::new(seed)))
        }
        "alphabeta" => Ok(Box::new(AlphaBeta::from_spec(parsed, seed)?)),
        "mcts" => Ok(Box::new(halatafl_mcts::MctsAgent::from_spec(parsed, seed)?)),
        "net" => halatafl_nn::build_net_agent(parsed, seed, variant, net_registry()),
        "best" => halatafl_nn::build_shipped_agent(parsed, seed, variant, net_registry()),
        _ => Err(parsed.unknown_kind(AGENT_FORMS)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_agent::Budget;
    use halatafl_rules::{Game, Position};

    #[test]
    fn prove_wraps_any_kind_in_classic_without_sideways_steps_only() {
        let classic: Variant = "classic geese=13".parse().unwrap();
        // Geese to move and win in a few moves.
        let won =
            Position::from_fen("GF./.GG/GGGGGGG/..G.GG./......./.../... g 1", classic).unwrap();
        let mut agent = build_agent("alphabeta:depth=1,prove=500", 1, classic).unwrap();
        assert_eq!(agent.spec(), "alphabeta:depth=1,prove=500");
        let decision = agent.choose(&Game::new(won), &Budget::default());
        assert!(
            decision.info.extra.starts_with("proven win in "),
            "{decision:?}"
        );
        // Without the key the kind's own agent plays, as before.
        let mut plain = build_agent("alphabeta:depth=1", 1, classic).unwrap();
        let plain_move = plain.choose(&Game::new(won), &Budget::default());
        assert!(!plain_move.info.extra.contains("proven"));

        for (spec, variant, why) in [
            (
                "random:prove=100",
                Variant::two_foxes(),
                "repetition draw depends",
            ),
            ("random:prove=0", classic, "node count in [1, 10000000]"),
            ("random:prove=many", classic, "invalid digit"),
        ] {
            let err = build_agent(spec, 1, variant).err().unwrap().to_string();
            assert!(
                err.contains("`prove=") && err.contains(why),
                "{spec}: {err}"
            );
        }
        // The kind still refuses keys it does not take.
        let err = build_agent("random:prove=100,depth=2", 1, classic)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("`depth` is not an option of `random`"),
            "{err}"
        );
    }
}
