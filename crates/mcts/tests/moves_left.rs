//! The moves-left utility on a constructed game: two root moves whose lines
//! are worth the same, one predicted to end soon and one late. A losing
//! side takes the late one, a winning side the early one, and with the
//! utility at 0 (or an evaluator that predicts no plies left) the search
//! is exactly what it was.

use halatafl_mcts::search::moves_left_adjusted;
use halatafl_mcts::{
    Evaluations, Evaluator, LeafBatch, MctsConfig, Search, SearchGame, Terminal, Wdl,
};

/// A game that never ends, with two moves everywhere: 0 and 1. The history
/// is the state.
#[derive(Clone, Debug, Default)]
struct TwoLines {
    history: Vec<u8>,
}

impl SearchGame for TwoLines {
    type Move = u8;
    type Leaf = Vec<u8>;

    fn legal_moves(&self, out: &mut Vec<u8>) {
        out.extend([0, 1]);
    }

    fn terminal(&self, _has_legal_move: bool) -> Option<Terminal> {
        None
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

    fn from_leaf(leaf: &Vec<u8>) -> TwoLines {
        TwoLines {
            history: leaf.clone(),
        }
    }
}

/// The root's side to move has value `root_q` everywhere, whatever it
/// plays. Root priors favour `favoured`. Plies left: 15 at the root; after
/// root move 0 the game ends 6 plies from the root, after move 1 26 plies
/// from it (the predictions along each line agree with each other).
struct Fake {
    root_q: f32,
    favoured: usize,
    predicts_plies: bool,
}

impl Evaluator<TwoLines> for Fake {
    fn evaluate(&self, batch: &LeafBatch<TwoLines>, out: &mut Evaluations) {
        for i in 0..batch.len() {
            let history = batch.leaf(i);
            let priors = out.priors_mut(i);
            if history.is_empty() {
                priors[self.favoured] = 0.6;
                priors[1 - self.favoured] = 0.4;
            } else {
                priors.fill(0.5);
            }
            // Even plies: the root's side to move.
            let q = if history.len().is_multiple_of(2) {
                self.root_q
            } else {
                -self.root_q
            };
            out.set_value(i, Wdl::from_q_draw(q, 0.0));
            if self.predicts_plies {
                let plies = match history.first() {
                    None => 15.0,
                    Some(0) => 6.0 - history.len() as f32,
                    Some(_) => 26.0 - history.len() as f32,
                };
                out.set_plies_left(i, plies.max(0.0));
            }
        }
    }
}

fn search(utility: f32, evaluator: &Fake) -> (u8, Vec<u32>) {
    let config = MctsConfig {
        sims: 300,
        moves_left_utility: utility,
        ..MctsConfig::default()
    };
    let mut s = Search::new(TwoLines::default(), config, 1);
    let result = s.run(evaluator, 300, None, None);
    (s.choose_move().unwrap(), result.visits)
}

#[test]
fn a_losing_side_prefers_the_line_that_lasts_longer() {
    // Losing, with priors that favour the short line (move 0).
    let fake = Fake {
        root_q: -0.9,
        favoured: 0,
        predicts_plies: true,
    };
    let (without, _) = search(0.0, &fake);
    assert_eq!(without, 0, "equal values: the prior decides");
    let (with, visits) = search(0.1, &fake);
    assert_eq!(with, 1, "the long line: {visits:?}");
}

#[test]
fn a_winning_side_prefers_the_line_that_ends_sooner() {
    // Winning, with priors that favour the long line (move 1).
    let fake = Fake {
        root_q: 0.9,
        favoured: 1,
        predicts_plies: true,
    };
    let (without, _) = search(0.0, &fake);
    assert_eq!(without, 1, "equal values: the prior decides");
    let (with, visits) = search(0.1, &fake);
    assert_eq!(with, 0, "the short line: {visits:?}");
}

#[test]
fn the_utility_at_zero_or_without_predictions_changes_nothing() {
    let with_plies = Fake {
        root_q: -0.9,
        favoured: 0,
        predicts_plies: true,
    };
    let without_plies = Fake {
        predicts_plies: false,
        ..with_plies
    };
    let reference = search(0.0, &without_plies);
    assert_eq!(search(0.0, &with_plies), reference);
    assert_eq!(search(0.1, &without_plies), reference);
    // A balanced position is left alone too: |q| below the threshold.
    let balanced = Fake {
        root_q: -0.1,
        ..with_plies
    };
    let balanced_without = Fake {
        predicts_plies: false,
        ..balanced
    };
    assert_eq!(search(0.1, &balanced), search(0.0, &balanced_without));
}

#[test]
fn the_adjustment_is_bounded_odd_and_gated_by_the_value() {
    for &q in &[-1.0f32, -0.9, -0.5, 0.3, 0.7, 1.0] {
        for &longer in &[-200.0f32, -10.0, 0.0, 5.0, 300.0] {
            let adjusted = moves_left_adjusted(q, longer, 0.05);
            assert!(
                (adjusted - q).abs() <= 0.05 + 1e-6,
                "{q} {longer} -> {adjusted}"
            );
            assert!((-1.0..=1.0).contains(&adjusted));
            assert!((moves_left_adjusted(-q, longer, 0.05) + adjusted).abs() < 1e-6);
        }
    }
    // Losing: longer is better; winning: shorter is better.
    assert!(moves_left_adjusted(-0.8, 20.0, 0.05) > moves_left_adjusted(-0.8, -20.0, 0.05));
    assert!(moves_left_adjusted(0.8, -20.0, 0.05) > moves_left_adjusted(0.8, 20.0, 0.05));
    // Near a draw nothing changes; no difference in length changes nothing.
    assert_eq!(moves_left_adjusted(0.2, 50.0, 0.05), 0.2);
    assert_eq!(moves_left_adjusted(-0.9, 0.0, 0.05), -0.9);
}
