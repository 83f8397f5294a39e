//! `cheapest_win` on a constructed game where both root moves win by force
//! in three plies, at different costs in material. The root's side, A,
//! moves at even plies:
//!
//! ```text
//! root 0 (prior 0.95): B replies 0 (A then holds -2) or 1 (-1)   proof keeps -2
//! root 1 (prior 0.05): B replies 0 (A holds 0) or 1 (-1)          proof keeps -1
//! ```
//!
//! A's only move at ply 2 ends the game with B to move and lost. Without
//! the option the search stops at the first proof, the favoured move's;
//! with it the search proves both and plays root 1, whose worst case (B's
//! costliest reply) keeps more.

use halatafl_mcts::{
    Evaluations, Evaluator, LeafBatch, MctsConfig, Search, SearchGame, Terminal, Wdl,
};

#[derive(Clone, Debug, Default)]
struct TwoProofs {
    history: Vec<u8>,
}

impl TwoProofs {
    /// A's material after the moves so far.
    fn a_material(&self) -> i32 {
        match self.history.as_slice() {
            [0, 0, ..] => -2,
            [0, 1, ..] | [1, 1, ..] => -1,
            _ => 0,
        }
    }
}

impl SearchGame for TwoProofs {
    type Move = u8;
    type Leaf = Vec<u8>;

    fn legal_moves(&self, out: &mut Vec<u8>) {
        match self.history.as_slice() {
            [] | [_] => out.extend([0, 1]),
            [_, _] => out.push(0),
            _ => {}
        }
    }

    fn terminal(&self, _has_legal_move: bool) -> Option<Terminal> {
        // B moves at ply 3 and has lost.
        (self.history.len() == 3).then_some(Terminal::Loss)
    }

    fn play(&mut self, mv: u8) {
        self.history.push(mv);
    }

    fn undo(&mut self) {
        self.history.pop();
    }

    fn ply(&self) -> usize {
        self.history.len()
    }

    fn leaf(&self) -> Vec<u8> {
        self.history.clone()
    }

    fn from_leaf(leaf: &Vec<u8>) -> TwoProofs {
        TwoProofs {
            history: leaf.clone(),
        }
    }

    fn material(&self) -> i32 {
        if self.history.len().is_multiple_of(2) {
            self.a_material()
        } else {
            -self.a_material()
        }
    }
}

/// Values say nothing (an even game everywhere); the root's priors favour
/// move 0, the other nodes' are even.
struct Favouring;

impl Evaluator<TwoProofs> for Favouring {
    fn evaluate(&self, batch: &LeafBatch<TwoProofs>, out: &mut Evaluations) {
        for i in 0..batch.len() {
            let root = batch.leaf(i).is_empty();
            let priors = out.priors_mut(i);
            if root {
                priors.copy_from_slice(&[0.95, 0.05]);
            } else {
                let n = priors.len() as f32;
                priors.fill(1.0 / n);
            }
            out.set_value(i, Wdl::from_q_draw(0.0, 0.0));
        }
    }
}

fn play(cheapest_win: bool, material_utility: f32, sims: u32) -> (u8, u32) {
    let config = MctsConfig {
        sims,
        cheapest_win,
        material_utility,
        ..MctsConfig::default()
    };
    let mut search = Search::new(TwoProofs::default(), config, 1);
    let result = search.run(&Favouring, sims, None, None);
    assert_eq!(result.proven, Some(Terminal::Win));
    (search.choose_move().unwrap(), result.simulations)
}

#[test]
fn the_first_proof_ends_the_search_without_the_option() {
    for utility in [0.0, 0.3] {
        let (mv, simulations) = play(false, utility, 400);
        assert_eq!(mv, 0, "the favoured move's proof comes first");
        assert!(simulations < 400, "the search stopped at the proof");
    }
}

#[test]
fn the_option_plays_the_proof_that_keeps_the_most() {
    for utility in [0.0, 0.3] {
        for sims in [50, 400] {
            let (mv, _) = play(true, utility, sims);
            assert_eq!(mv, 1, "utility {utility}, {sims} simulations");
        }
    }
}

#[test]
fn the_option_stops_once_every_root_move_is_proven() {
    let (_, simulations) = play(true, 0.0, 100_000);
    assert!(
        simulations < 100,
        "{simulations} simulations for a game of 9 positions"
    );
}
