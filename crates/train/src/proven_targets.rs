//! Proven value targets (`[selfplay] prove_targets`): before a finished
//! game's samples are stored, a df-pn proof search ([`halatafl_solver::Solver`])
//! of a fixed node budget asks, for each sample's position, whether the side
//! to move wins. Where it settles the question, the exact result replaces
//! the sample's value target, both the game's result and the search value
//! the replay mixes in (`replay.search_value_mix`); the rest keep theirs.
//!
//! Why: the classic network's remaining end-stage mistakes are geese wins
//! its value head calls lost, and most of them are proven in a few hundred
//! df-pn nodes (experiments/README.md, "Classic: a root proof search"). A
//! value head trained on the game result learns such a position's value
//! only from games that happened to be played out well from it; the search
//! value mixed in repeats the head's own error. A proof costs a few hundred
//! to a few thousand nodes and is exact, the same idea as the MCTS-solver's
//! proven values (Winands, Björnsson and Saito 2008) carried into the
//! targets. It is the run's own search, not the solved tables: nothing
//! outside self-play's compute enters the labels.
//!
//! `[selfplay] prove_policy` extends it to the policy: in a sample proven
//! won, each legal move is proven as well, and the policy target keeps only
//! the moves proven to keep the win ([`policy_on_winning_moves`]). Where the
//! value head calls a won position lost, every child looks lost, the visits
//! follow the prior, and the policy is what errs.
//!
//! Measured on classic 13 geese, three seeds each against the shipped
//! recipe: neither lowered the end-stage error (2.3% against 2.3% for
//! both; experiments/README.md, "Classic: proven value targets"), so both
//! stay off by default.
//!
//! Only classic Fox and Geese without sideways steps: there no position
//! recurs and the game has no draws, so one boolean search for the side to
//! move settles the value from the position alone (a disproof is a loss),
//! whatever the game's history.
//!
//! The samples of a game are proven from its last to its first: the late
//! positions are the cheap ones, and the table (kept across games) then
//! holds their values when an earlier position's proof reaches them.

use crate::selfplay::wdl_for;
use halatafl_nn::Sample;
use halatafl_rules::{Position, Variant};
use halatafl_solver::{SearchOutcome, Solver, SolverConfig};

/// Table of a worker's proof search, in MiB.
const TABLE_MIB: usize = 32;

/// What a proof settled about one sample.
#[derive(Clone, Debug)]
pub(crate) struct ProvenTarget {
    /// The exact win/draw/loss for the side to move.
    pub(crate) wdl: [f32; 3],
    /// With `prove_policy`, in a won position whose visits were not all on
    /// proven winning moves already: the policy target on the winning moves
    /// ([`policy_on_winning_moves`]).
    pub(crate) policy: Option<Vec<f32>>,
}

/// A worker's proof search for value targets.
pub(crate) struct TargetProver {
    solver: Solver,
    nodes: u64,
}

impl TargetProver {
    /// A prover of `nodes` nodes a position for games of `variant`; `None`
    /// when `nodes` is 0 (the option is off). The config's validation has
    /// refused variants where positions recur.
    pub(crate) fn new(nodes: u64, variant: Variant) -> Option<TargetProver> {
        if nodes == 0 {
            return None;
        }
        if let Err(why) = halatafl_solver::proving::proofs_are_exact_in(variant) {
            panic!("prove_targets passed validation: {why}");
        }
        let solver = Solver::new(SolverConfig {
            budget_nodes: nodes,
            tt_mib: TABLE_MIB,
            ..SolverConfig::default()
        })
        .expect("a valid solver config");
        Some(TargetProver { solver, nodes })
    }

    /// What the proof search settles about each of a game's samples, in
    /// their order; proven from the last to the first (see the module doc).
    /// With `policy` (`prove_policy`), a won sample whose visits are not all
    /// on moves proven to keep the win gets a policy target on those moves.
    pub(crate) fn prove_game<'a>(
        &mut self,
        samples: impl DoubleEndedIterator<Item = &'a Sample>,
        policy: bool,
    ) -> Vec<Option<ProvenTarget>> {
        let mut proven: Vec<_> = samples
            .rev()
            .map(|sample| {
                let wdl = self.exact_wdl(&sample.position)?;
                let policy = (policy && wdl[0] == 1.0)
                    .then(|| {
                        let winning = self.winning_moves(&sample.position);
                        policy_on_winning_moves(&sample.policy, &winning)
                    })
                    .filter(|moved| *moved != sample.policy);
                Some(ProvenTarget { wdl, policy })
            })
            .collect();
        proven.reverse();
        proven
    }

    /// The exact win/draw/loss of `position` for its side to move, if the
    /// proof search settles it within the budget.
    pub(crate) fn exact_wdl(&mut self, position: &Position) -> Option<[f32; 3]> {
        let side = position.side();
        let winner = match self.solver.prove(position, side, self.nodes).0 {
            SearchOutcome::Proven => side,
            // No draws in this variant: not winning is losing.
            SearchOutcome::Disproven => side.other(),
            SearchOutcome::Unknown { .. } => return None,
        };
        Some(wdl_for(Some(winner), side))
    }

    /// For a position its side to move wins: which of its legal moves
    /// (in `legal_moves()` order) are proven to keep the win, each by a
    /// proof search of the budget on the position after it. A winning move
    /// the budget does not settle counts as not proven.
    pub(crate) fn winning_moves(&mut self, position: &Position) -> Vec<bool> {
        let mover = position.side();
        position
            .legal_moves()
            .iter()
            .map(|&mv| {
                let after = position.play(mv).expect("a legal move plays");
                // A position the move ends is settled by the solver's own
                // leaf rules, at no node.
                self.solver.prove(&after, mover, self.nodes).0 == SearchOutcome::Proven
            })
            .collect()
    }
}

/// The policy target `[selfplay] prove_policy` gives a position proven won:
/// `visits` (over the legal moves) kept on the moves proven to keep the win
/// and renormalised, or spread evenly over them where the search gave them
/// no visit; unchanged when no move is proven (as the MCTS-solver's own
/// root policy: proven wins share the mass, proven losses get none).
pub(crate) fn policy_on_winning_moves(visits: &[f32], winning: &[bool]) -> Vec<f32> {
    debug_assert_eq!(visits.len(), winning.len());
    let kept: f32 = visits
        .iter()
        .zip(winning)
        .filter(|(_, &w)| w)
        .map(|(v, _)| v)
        .sum();
    let proven = winning.iter().filter(|&&w| w).count();
    if proven == 0 {
        return visits.to_vec();
    }
    visits
        .iter()
        .zip(winning)
        .map(|(&v, &w)| match (w, kept > 0.0) {
            (false, _) => 0.0,
            (true, true) => v / kept,
            (true, false) => 1.0 / proven as f32,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_solver::{DagConfig, DagSolver};

    fn classic() -> Variant {
        "classic geese=13".parse().unwrap()
    }

    /// The exhaustive solver the proofs are checked against.
    fn exhaustive() -> DagSolver {
        DagSolver::new(DagConfig {
            budget_nodes: 10_000_000,
            tt_mib: 16,
        })
        .unwrap()
    }

    #[test]
    fn it_is_off_at_zero_nodes() {
        assert!(TargetProver::new(0, classic()).is_none());
    }

    #[test]
    #[should_panic(expected = "no position recurs there")]
    fn a_variant_with_recurring_positions_is_a_bug_here() {
        TargetProver::new(100, "two-foxes".parse().unwrap());
    }

    #[test]
    fn proven_values_agree_with_an_exhaustive_solve() {
        // Positions of a late game: the fox at b7 nearly shut in, with
        // either side to move, and two positions a ply or two off.
        let fens = [
            "GF./.GG/GGGGGGG/..G.GG./......./.../... g 1",
            "GF./.GG/GGGGGGG/..G.GG./......./.../... f 1",
            ".F./G.G/GGGGGGG/..G.GG./......./.../... g 1",
            ".F./G.G/GGGGGGG/..G.GG./......./.../... f 1",
        ];
        let mut prover = TargetProver::new(100_000, classic()).unwrap();
        let mut settled = 0;
        for fen in fens {
            let position = Position::from_fen(fen, classic()).unwrap();
            let Some(wdl) = prover.exact_wdl(&position) else {
                continue;
            };
            settled += 1;
            let exact = exhaustive()
                .solve(&position)
                .expect("the DAG search solves a late position");
            let mover_wins = exact.winner == Some(position.side());
            assert_eq!(
                wdl,
                if mover_wins {
                    [1.0, 0.0, 0.0]
                } else {
                    [0.0, 0.0, 1.0]
                },
                "{fen}"
            );
        }
        assert!(settled >= 3, "only {settled} of 4 late positions settled");
    }

    #[test]
    fn winning_moves_are_exactly_those_that_keep_the_win() {
        let won =
            Position::from_fen("GF./.GG/GGGGGGG/..G.GG./......./.../... g 1", classic()).unwrap();
        let mut prover = TargetProver::new(100_000, classic()).unwrap();
        assert_eq!(prover.exact_wdl(&won), Some([1.0, 0.0, 0.0]));
        let winning = prover.winning_moves(&won);
        let moves = won.legal_moves();
        assert_eq!(winning.len(), moves.len());
        let mut exact = exhaustive();
        for (&mv, &w) in moves.iter().zip(&winning) {
            let after = won.play(mv).unwrap();
            let keeps = exact.solve(&after).unwrap().winner == Some(won.side());
            assert_eq!(w, keeps, "{mv}");
        }
        assert!(
            winning.iter().any(|&w| w),
            "a won position has a winning move"
        );
        assert!(!winning.iter().all(|&w| w), "and here a losing one too");
    }

    #[test]
    fn the_policy_keeps_the_visits_of_winning_moves() {
        let winning = [false, true, true, false];
        assert_eq!(
            policy_on_winning_moves(&[0.5, 0.25, 0.0, 0.25], &winning),
            [0.0, 1.0, 0.0, 0.0]
        );
        assert_eq!(
            policy_on_winning_moves(&[0.5, 0.1, 0.3, 0.1], &winning),
            [0.0, 0.25, 0.75, 0.0]
        );
        // No visit on a winning move: they share the mass evenly.
        assert_eq!(
            policy_on_winning_moves(&[0.5, 0.0, 0.0, 0.5], &winning),
            [0.0, 0.5, 0.5, 0.0]
        );
        // No move proven: the visits stay.
        assert_eq!(
            policy_on_winning_moves(&[0.5, 0.0, 0.0, 0.5], &[false; 4]),
            [0.5, 0.0, 0.0, 0.5]
        );
    }

    #[test]
    fn a_budget_too_small_leaves_the_start_unsettled() {
        let mut prover = TargetProver::new(10, classic()).unwrap();
        let start = Position::start(classic());
        assert_eq!(prover.exact_wdl(&start), None);
    }
}
