//! Any agent with a root proof search before its own (the `prove=N` agent
//! option): df-pn ([`crate::Solver`]) asks, within N nodes, whether the side
//! to move wins; a proven win is played at once, and anything else (a
//! loss, a draw, a budget spent) is left to the agent's own search.
//!
//! Why: the classic network's end-stage mistakes are geese wins its value
//! head calls lost (-0.55 to -0.99), which MCTS with that value does not
//! find at 1,000 simulations, while most are proven in 27 to 618 df-pn
//! nodes (experiments/README.md, "Classic: a root proof search"). The
//! proof search is the solver's own, so its wins are exact.
//!
//! Only classic Fox and Geese without sideways steps: there the geese move
//! only forward, so no position recurs and a proof from the position alone
//! holds whatever the game's history. Where positions can recur, a
//! repetition draw depends on the history the solver does not see.
//!
//! The proof search's time comes on top of the agent's own budget, and its
//! table (16 MiB) is kept across moves and games: a value proven once is
//! looked up the next time.

use crate::search::{SearchOutcome, Solver, SolverConfig};
use halatafl_agent::{Agent, Budget, Decision, SearchInfo};
use halatafl_rules::{Game, Variant};

/// Table of a root proof search, in MiB.
const PROVING_TABLE_MIB: usize = 16;

/// Most nodes `prove=` takes.
pub const MAX_PROVE_NODES: u64 = 10_000_000;

/// Whether a proof from a position alone is exact in `variant`, whatever
/// the game's history: only where no position recurs (classic Fox and
/// Geese without sideways steps). Elsewhere the refusal says why; the
/// `prove=` option and self-play's proven targets both ask.
pub fn proofs_are_exact_in(variant: Variant) -> Result<(), String> {
    if variant.no_position_recurs() {
        return Ok(());
    }
    Err(format!(
        "a proof from the position alone is exact only in classic Fox and Geese without sideways \
         steps (no position recurs there); in {variant} a repetition draw depends on the game's history"
    ))
}

/// An agent whose moves are preceded by a root proof search.
pub struct ProvingAgent {
    inner: Box<dyn Agent>,
    solver: Solver,
    nodes: u64,
    spec: String,
}

impl ProvingAgent {
    /// Wraps `inner` (built from `spec`, which includes the `prove=` option)
    /// with a proof search of `nodes` nodes a move, for games of `variant`.
    /// Refuses a variant where positions can recur, and a budget of 0 or
    /// more than [`MAX_PROVE_NODES`].
    pub fn new(
        inner: Box<dyn Agent>,
        nodes: u64,
        spec: String,
        variant: Variant,
    ) -> Result<ProvingAgent, String> {
        proofs_are_exact_in(variant)?;
        if !(1..=MAX_PROVE_NODES).contains(&nodes) {
            return Err(format!("must be a node count in [1, {MAX_PROVE_NODES}]"));
        }
        let solver = Solver::new(SolverConfig {
            budget_nodes: nodes,
            tt_mib: PROVING_TABLE_MIB,
            ..SolverConfig::default()
        })
        .map_err(|e| e.to_string())?;
        Ok(ProvingAgent {
            inner,
            solver,
            nodes,
            spec,
        })
    }
}

impl Agent for ProvingAgent {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn choose(&mut self, game: &Game, budget: &Budget) -> Decision {
        let position = *game.position();
        let (outcome, mv, spent) = self.solver.prove(&position, position.side(), self.nodes);
        match (outcome, mv) {
            (SearchOutcome::Proven, Some(mv)) => Decision {
                mv,
                value: Some(1.0),
                info: SearchInfo {
                    nodes: spent,
                    pv: vec![mv],
                    extra: format!("proven win in {spent} proof nodes"),
                    ..SearchInfo::default()
                },
            },
            _ => self.inner.choose(game, budget),
        }
    }

    fn new_game(&mut self, seed: u64) {
        self.inner.new_game(seed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_agent::RandomAgent;
    use halatafl_rules::Position;

    fn classic() -> Variant {
        "classic geese=13".parse().unwrap()
    }

    #[test]
    fn a_proven_win_is_played_and_anything_else_is_left_to_the_agent() {
        // Geese to move and win: the fox at b7 is shut in within a few
        // moves; a random goose move mostly lets it out.
        let won =
            Position::from_fen("GF./.GG/GGGGGGG/..G.GG./......./.../... g 1", classic()).unwrap();
        let mut agent = ProvingAgent::new(
            Box::new(RandomAgent::new(1)),
            1000,
            "random:prove=1000".into(),
            classic(),
        )
        .unwrap();
        assert_eq!(agent.spec(), "random:prove=1000");
        let decision = agent.choose(&Game::new(won), &Budget::default());
        assert_eq!(decision.value, Some(1.0));
        assert!(decision.info.extra.starts_with("proven win in "));
        // The move keeps the win: the geese still win after it, by a solve
        // of their own.
        let mut after = Game::new(won);
        after.play(decision.mv).unwrap();
        let mut check = Solver::new(SolverConfig {
            tt_mib: 16,
            ..SolverConfig::default()
        })
        .unwrap();
        let (outcome, _, _) =
            check.prove(after.position(), after.position().side().other(), 100_000);
        assert_eq!(outcome, SearchOutcome::Proven);

        // Asked again, the table already holds the win: it still comes with
        // a winning move, never left to the random agent (which lets the
        // fox out with most of its moves).
        for _ in 0..20 {
            let again = agent.choose(&Game::new(won), &Budget::default());
            assert_eq!(again.value, Some(1.0));
            let mut after = Game::new(won);
            after.play(again.mv).unwrap();
            let (outcome, _, _) =
                check.prove(after.position(), after.position().side().other(), 100_000);
            assert_eq!(outcome, SearchOutcome::Proven, "{}", again.mv);
        }

        // At the start nothing is proven in 50 nodes: the random agent's
        // own move, as it plays without the proof search.
        let start = Game::start_of(classic());
        let mut plain = RandomAgent::new(9);
        let mut wrapped =
            ProvingAgent::new(Box::new(RandomAgent::new(9)), 50, "r".into(), classic()).unwrap();
        for _ in 0..5 {
            let want = plain.choose(&start, &Budget::default());
            let got = wrapped.choose(&start, &Budget::default());
            assert_eq!(got, want);
        }
    }

    #[test]
    fn variants_where_positions_recur_and_bad_budgets_are_refused() {
        let random = || Box::new(RandomAgent::new(1)) as Box<dyn Agent>;
        for variant in [
            Variant::two_foxes(),
            "classic geese=13 sideways".parse().unwrap(),
        ] {
            let err = ProvingAgent::new(random(), 100, "x".into(), variant)
                .err()
                .unwrap();
            assert!(err.contains("repetition draw depends"), "{err}");
        }
        for nodes in [0, MAX_PROVE_NODES + 1] {
            let err = ProvingAgent::new(random(), nodes, "x".into(), classic())
                .err()
                .unwrap();
            assert!(err.contains("node count in [1, 10000000]"), "{err}");
        }
    }
}
