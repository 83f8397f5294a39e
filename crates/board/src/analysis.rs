//! What the board says about a position: the network's policy and value,
//! a search's visits and values per move, alpha-beta's evaluation and line,
//! the solver's proven value and, for classic Fox and Geese, the value in
//! the retrograde tables (in [`crate::tables`]). Each is a blocking
//! function run on a worker thread (the server bounds how many run at
//! once); the searches take the stop signal the server raises at its time
//! cap, the solver its node budget.
//!
//! Values are always for the side to move in the analysed position, in
//! [-1, 1] (win − loss).

use crate::line::MoveView;
use halatafl_agent::{AgentSpec, StopSignal};
use halatafl_alphabeta::{mate_distance, AlphaBeta, Limits};
use halatafl_mcts::{Evaluator, MctsConfig, Search, Terminal, Wdl};
use halatafl_nn::agent::NetSource;
use halatafl_nn::Precision;
use halatafl_rules::{Game, Position};
use halatafl_solver::{Solver, SolverConfig};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A win/draw/loss estimate for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ValueView {
    /// Probability of a win.
    pub win: f32,
    /// Probability of a draw.
    pub draw: f32,
    /// Probability of a loss.
    pub loss: f32,
    /// `win - loss`.
    pub q: f32,
}

impl From<Wdl> for ValueView {
    fn from(w: Wdl) -> ValueView {
        ValueView {
            win: w.win,
            draw: w.draw,
            loss: w.loss,
            q: w.q(),
        }
    }
}

/// Which network analyses: the shipped one or a checkpoint the server was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetChoice {
    /// `best`: `models/best.safetensors`, built into the binary.
    Shipped,
    /// `net:ckpt=PATH`.
    File(std::path::PathBuf),
}

impl NetChoice {
    /// The spec naming this network (`best`, `net:ckpt=PATH`).
    pub fn spec(&self) -> String {
        match self {
            NetChoice::Shipped => "best".into(),
            NetChoice::File(p) => format!("net:ckpt={}", p.display()),
        }
    }

    /// The network's evaluator, loaded once per process (shared with the
    /// agents), refused for a game of another variant than its own.
    pub fn evaluator(&self, game: &Game) -> Result<Arc<halatafl_nn::NetEvaluator>, String> {
        let source = match self {
            NetChoice::Shipped => NetSource::Shipped,
            NetChoice::File(p) => NetSource::File(Path::new(p)),
        };
        halatafl_program::agents::net_registry()
            .network_for(source, "cpu", Precision::F32, game.position().variant())
            .map(|(e, _)| e)
    }
}

/// A move with the network's prior.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PriorView {
    /// The move.
    #[serde(flatten)]
    pub mv: MoveView,
    /// The policy's probability.
    pub prior: f32,
}

/// The network's raw opinion.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NetworkAnalysis {
    /// The network (`best`, `net:ckpt=...`).
    pub network: String,
    /// Every legal move with its prior, most likely first.
    pub moves: Vec<PriorView>,
    /// The value head's estimate.
    pub value: ValueView,
}

/// The network's policy over the legal moves and its value.
pub fn network(game: &Game, net: &NetChoice) -> Result<NetworkAnalysis, String> {
    over(game)?;
    let evaluator = net.evaluator(game)?;
    let reps = game.repetitions().min(u8::MAX as usize) as u8;
    let (priors, value) = evaluator.evaluate_position(game.position(), reps);
    let mut moves: Vec<PriorView> = game
        .position()
        .legal_moves()
        .iter()
        .zip(priors)
        .map(|(&m, prior)| PriorView {
            mv: MoveView::of(m),
            prior,
        })
        .collect();
    moves.sort_by(|a, b| b.prior.total_cmp(&a.prior));
    Ok(NetworkAnalysis {
        network: net.spec(),
        moves,
        value: value.into(),
    })
}

/// A move as a search saw it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchMove {
    /// The move.
    #[serde(flatten)]
    pub mv: MoveView,
    /// Visits.
    pub visits: u32,
    /// Mean value of the move for the side to move (0 when unvisited).
    pub q: f32,
    /// The improved policy (visit share, or Gumbel's completed policy).
    pub policy: f32,
    /// `win`, `draw` or `loss` when the search proved the move.
    pub proven: Option<&'static str>,
}

/// A search's root.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchAnalysis {
    /// What guided the search (`best`, `net:ckpt=...`, `rollouts`).
    pub guide: String,
    /// Every legal move, most visited first.
    pub moves: Vec<SearchMove>,
    /// The root's value.
    pub value: ValueView,
    /// `win`, `draw` or `loss` when the search proved the root.
    pub proven: Option<&'static str>,
    /// Simulations run.
    pub simulations: u32,
    /// The most visited line.
    pub pv: Vec<MoveView>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

fn terminal_word(t: Terminal) -> &'static str {
    match t {
        Terminal::Win => "win",
        Terminal::Draw => "draw",
        Terminal::Loss => "loss",
    }
}

/// MCTS from this position (its history counts for repetitions): guided by
/// `net`, or by random playouts when `net` is `None`; `sims` simulations,
/// ended early at `deadline` or by `stop`.
pub fn search(
    game: &Game,
    net: Option<&NetChoice>,
    sims: u32,
    deadline: Option<Instant>,
    stop: &StopSignal,
    seed: u64,
) -> Result<SearchAnalysis, String> {
    over(game)?;
    let started = Instant::now();
    let (evaluator, guide, config): (Arc<dyn Evaluator<Game>>, String, MctsConfig) = match net {
        Some(net) => (net.evaluator(game)?, net.spec(), MctsConfig::default()),
        None => {
            // The `mcts` agent's defaults: random playouts.
            let spec = AgentSpec::parse("mcts", "").map_err(|e| e.to_string())?;
            let parsed = halatafl_mcts::from_spec(&spec, &[]).map_err(|e| e.to_string())?;
            (
                parsed.eval.evaluator(seed),
                "rollouts".into(),
                parsed.config,
            )
        }
    };
    let mut tree = Search::new(game.clone(), config, seed);
    tree.set_noise(false);
    let result = tree.run(evaluator.as_ref(), sims, deadline, Some(stop));
    let pv = tree
        .principal_variation(24)
        .into_iter()
        .map(MoveView::of)
        .collect();
    let mut moves: Vec<SearchMove> = (0..result.moves.len())
        .map(|i| SearchMove {
            mv: MoveView::of(result.moves[i]),
            visits: result.visits[i],
            q: result.q[i],
            policy: result.policy[i],
            proven: result.proven_moves[i].map(terminal_word),
        })
        .collect();
    moves.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.q.total_cmp(&a.q)));
    Ok(SearchAnalysis {
        guide,
        moves,
        value: result.value.into(),
        proven: result.proven.map(terminal_word),
        simulations: result.simulations,
        pv,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Alpha-beta's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlphaBetaAnalysis {
    /// The move it would play.
    pub best: MoveView,
    /// Its score for the side to move: centi-geese (material and position)
    /// or, for a forced end, a mate-distance score.
    pub score: i32,
    /// Plies to a forced end (positive: the side to move wins), when found.
    pub mate_in: Option<i32>,
    /// The score as a value in [-1, 1].
    pub value: f32,
    /// The deepest iteration completed.
    pub depth: u32,
    /// Positions searched.
    pub nodes: u64,
    /// The principal variation.
    pub pv: Vec<MoveView>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Alpha-beta from this position: iterative deepening to `depth` plies or
/// for `movetime`, whichever ends first, or until `stop`.
pub fn alphabeta(
    game: &Game,
    depth: Option<u32>,
    movetime: Option<Duration>,
    stop: &StopSignal,
) -> Result<AlphaBetaAnalysis, String> {
    over(game)?;
    let started = Instant::now();
    let spec = AgentSpec::parse("alphabeta", "").map_err(|e| e.to_string())?;
    let mut ab = AlphaBeta::from_spec(&spec, 0).map_err(|e| e.to_string())?;
    let r = ab.search(
        game,
        &Limits {
            depth,
            movetime,
            stop: Some(stop.clone()),
        },
    );
    Ok(AlphaBetaAnalysis {
        best: MoveView::of(r.best),
        score: r.score,
        mate_in: mate_distance(r.score),
        value: ab.score_to_value(r.score),
        depth: r.depth,
        nodes: r.nodes,
        pv: r.pv.into_iter().map(MoveView::of).collect(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The solver's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SolverAnalysis {
    /// `foxes`, `geese` or `draw` when proven; `None` when the budget ran out.
    pub value: Option<&'static str>,
    /// A move that keeps the value (for a loss: some move), when known.
    pub best: Option<MoveView>,
    /// Positions expanded.
    pub nodes: u64,
    /// The budget it had.
    pub budget: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// df-pn on the position as if the game started there (a position string
/// carries no history), within `budget` nodes.
pub fn solve(position: &Position, budget: u64) -> Result<SolverAnalysis, String> {
    let mut solver = Solver::new(SolverConfig {
        budget_nodes: budget,
        tt_mib: 64,
        ..SolverConfig::default()
    })
    .map_err(|e| e.to_string())?;
    let s = solver.solve(position);
    Ok(SolverAnalysis {
        value: s.value.map(|v| v.word()),
        best: s.best.map(MoveView::of),
        nodes: s.nodes,
        budget,
        seconds: s.elapsed.as_secs_f64(),
    })
}

fn over(game: &Game) -> Result<(), String> {
    match game.outcome() {
        Some(o) => Err(format!(
            "the game is over ({}, {}): there is nothing to analyse",
            o.result_word(),
            o.reason.name()
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphabeta_and_rollout_search_answer_for_the_side_to_move() {
        let mut game = Game::start_of(halatafl_rules::Variant::two_foxes());
        game.play_str("c7-c6").unwrap();
        let stop = StopSignal::new();
        let ab = alphabeta(&game, Some(2), None, &stop).unwrap();
        assert_eq!(ab.depth, 2);
        assert!(game
            .position()
            .is_legal(game.position().parse_move(&ab.best.text).unwrap()));
        assert_eq!(ab.pv[0], ab.best);
        let s = search(&game, None, 64, None, &stop, 1).unwrap();
        assert_eq!(s.moves.len(), game.position().legal_moves().len());
        let visits: u32 = s.moves.iter().map(|m| m.visits).sum();
        assert!(
            visits > 0 && visits <= s.simulations,
            "{visits} {}",
            s.simulations
        );
        assert!(s.moves.windows(2).all(|w| w[0].visits >= w[1].visits));
    }

    #[test]
    fn the_solver_proves_a_won_classic_ending_and_over_games_are_refused() {
        let variant: halatafl_rules::Variant = "classic geese=13".parse().unwrap();
        // Four geese, the fox to move can take one: fewer than four is a fox win.
        let p = Position::from_fen(".../.../..FG.../....G../......./G../..G f 0", variant).unwrap();
        let s = solve(&p, 100_000).unwrap();
        assert_eq!(s.value, Some("foxes"));
        let mut over_game = Game::new(p);
        over_game.play_str("c5xe5xe3").unwrap();
        let err = alphabeta(&over_game, Some(1), None, &StopSignal::new()).unwrap_err();
        assert!(err.contains("game is over"), "{err}");
    }
}
