//! Many games stepped at once, for vectorized training loops: one call takes
//! an action per game and returns NumPy arrays for all of them.
//!
//! Each game keeps its legal moves from the last step, so resolving the next
//! actions generates nothing; a game that ends is restarted at once (the
//! arrays then show the new game's start, as Gymnasium's vector environments
//! do with same-step autoreset), so every call steps every game.

use crate::actions;
use crate::args::Int;
use crate::{encode_game, parse_position, parse_variant, value_error, PyGame, OBS_SHAPE};
use halatafl_nn::encoding::INPUT_SIZE;
use halatafl_rules::{Game, Move, MoveList, Position, Side};
use numpy::ndarray::{Array1, Array2, Array4};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray4, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Code of `winners` for a game that goes on.
const RUNNING: i8 = -1;
/// Code of `winners` for a draw (0 and 1 are the winning side: foxes, geese).
const DRAW: i8 = 2;

/// Most games in one batch: about 1.5 GB at [`KB_PER_GAME`]. The former cap
/// of 2^20 games needed about 24 GB, which a mistyped size took from the
/// machine before anything failed; more games than this are better stepped
/// as several batches.
pub(crate) const MAX_GAMES: i64 = 1 << 16;

/// What one game of a batch holds in memory, about, in kB, measured with
/// random play (RSS of `BatchGames(n)` stepped 600 to 1500 times, n = 4096
/// to 65536): 9.7 kB of state (the game with its history, its legal moves
/// and their actions) and its rows of the arrays a step returns (a 1960-byte
/// observation and a 1089-byte mask, allocated anew by every step while the
/// caller still holds the last ones), with the history grown by long games.
const KB_PER_GAME: i64 = 24;

fn side_code(side: Side) -> i8 {
    match side {
        Side::Foxes => 0,
        Side::Geese => 1,
    }
}

type Observations<'py> = Bound<'py, PyArray4<f32>>;
type Masks<'py> = Bound<'py, PyArray2<bool>>;
/// The observations and masks that `step(copy=False)` overwrites.
type ReusedArrays = (Py<PyArray4<f32>>, Py<PyArray2<bool>>);

/// What `step` returns: observations, masks, rewards, done flags, winners.
type StepResult<'py> = (
    Observations<'py>,
    Masks<'py>,
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<i8>>,
);

/// `BatchGames(num_games, variant="two-foxes", fen=None, seed=0,
/// opponent=None, side="foxes")`: games that all start from `fen` (default:
/// the variant's start).
///
/// With `opponent=None` the caller plays both sides. With
/// `opponent="random"` the caller plays `side` only: after each of its moves
/// the batch answers with a uniformly random legal move of the other side
/// (from the batch's seeded generator), also when a game (re)starts with
/// the other side to move, so every game always has `side` to move, and
/// `rewards` are `side`'s result. This is the single-agent vector
/// environment's engine (`halatafl.envs.HalataflVectorEnv`).
#[pyclass(module = "halatafl")]
pub struct BatchGames {
    games: Vec<Game>,
    /// Each game's legal moves in its current position (empty when over).
    legal: Vec<MoveList>,
    /// The action of each of `legal`'s moves, in the same order: computed
    /// once per position for the mask, the next step's resolving and
    /// `random_actions`.
    legal_actions: Vec<Vec<u16>>,
    start: Position,
    /// Seeds `random_actions`.
    rng: ChaCha8Rng,
    /// Games finished since the last `reset`, and plies played.
    finished: u64,
    plies: u64,
    /// The observation and mask arrays `step(copy=False)` overwrites and
    /// returns on every call, made on its first use.
    reused: Option<ReusedArrays>,
    /// The caller's side when a random opponent plays the other.
    agent_side: Option<Side>,
}

#[pymethods]
impl BatchGames {
    #[new]
    #[pyo3(signature = (num_games, variant="two-foxes", fen=None, seed=Int::from(0), opponent=None, side=None))]
    #[pyo3(
        text_signature = "(num_games, variant=\"two-foxes\", fen=None, seed=0, opponent=None, side=\"foxes\")"
    )]
    fn new(
        num_games: Int,
        variant: &str,
        fen: Option<&str>,
        seed: Int,
        opponent: Option<&str>,
        side: Option<&str>,
    ) -> PyResult<BatchGames> {
        let seed = seed.non_negative("seed")?;
        let num_games = num_games.in_range(
            "num_games",
            1,
            MAX_GAMES as u64,
            &format!(
                " (each game takes about {KB_PER_GAME} kB with its rows of the step arrays, \
                 {MAX_GAMES} games about {:.1} GB; step several batches for more)",
                (MAX_GAMES * KB_PER_GAME) as f64 / (1024.0 * 1024.0)
            ),
        )?;
        let start = parse_position(fen, parse_variant(variant)?)?;
        let probe = Game::new(start);
        if let Some(outcome) = probe.outcome() {
            return Err(value_error(format!(
                "the start position `{}` is already over: {outcome}",
                start.fen()
            )));
        }
        let agent_side = match (opponent, side) {
            (None, None) => None,
            (None, Some(_)) => return Err(value_error(
                "side= needs opponent=\"random\": without an opponent the caller plays both sides",
            )),
            (Some("random"), side) => Some(match side.unwrap_or("foxes") {
                "foxes" => Side::Foxes,
                "geese" => Side::Geese,
                other => {
                    return Err(value_error(format!(
                        "unknown side {other:?}: expected \"foxes\" or \"geese\""
                    )))
                }
            }),
            (Some(other), _) => {
                return Err(value_error(format!(
                    "unknown opponent {other:?}: the batch's own opponent is \"random\" \
                     (other agents: step both sides and choose their moves with halatafl.Agent)"
                )))
            }
        };
        if let Some(agent) = agent_side {
            // The opponent's opening reply must leave a game to play.
            if start.side() != agent {
                let ends = start.legal_moves().iter().any(|&m| {
                    let mut g = probe.clone();
                    g.play_unchecked(m);
                    let has_move = g.position().has_legal_move();
                    g.outcome_given(has_move).is_some()
                });
                if ends {
                    return Err(value_error(format!(
                        "the start position `{}` has the opponent to move, and one of its moves ends the game: \
                         give a start with a game left after any opening reply",
                        start.fen()
                    )));
                }
            }
        }
        let num_games = num_games as usize;
        let mut batch = BatchGames {
            games: vec![probe; num_games],
            legal: vec![MoveList::new(); num_games],
            legal_actions: vec![Vec::with_capacity(64); num_games],
            start,
            rng: ChaCha8Rng::seed_from_u64(seed),
            finished: 0,
            plies: 0,
            reused: None,
            agent_side,
        };
        batch.restart_all();
        Ok(batch)
    }

    #[getter]
    fn num_games(&self) -> usize {
        self.games.len()
    }

    /// Games finished and plies played since construction or `reset`.
    #[getter]
    fn games_finished(&self) -> u64 {
        self.finished
    }

    #[getter]
    fn plies_played(&self) -> u64 {
        self.plies
    }

    /// Restarts every game (and reseeds `random_actions` if `seed` is given);
    /// returns (observations (N, 10, 7, 7) float32, masks (N, 1089) bool).
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<Int>,
    ) -> PyResult<(Observations<'py>, Masks<'py>)> {
        if let Some(seed) = seed {
            self.rng = ChaCha8Rng::seed_from_u64(seed.non_negative("seed")?);
        }
        self.restart_all();
        self.finished = 0;
        self.plies = 0;
        Ok(self.observe(py))
    }

    /// The current observations and masks, as `reset` returns them.
    fn observe<'py>(&self, py: Python<'py>) -> (Observations<'py>, Masks<'py>) {
        let n = self.games.len();
        let (obs, mask) = py.detach(|| {
            let mut obs = vec![0.0f32; n * INPUT_SIZE];
            let mut mask = vec![false; n * actions::ACTION_SIZE];
            for i in 0..n {
                self.write_arrays(i, &mut obs, &mut mask);
            }
            (obs, mask)
        });
        to_arrays(py, n, obs, mask)
    }

    /// Plays one action per game (an integer array of length N). Every action
    /// is checked before any game moves: an illegal one raises ValueError
    /// naming the game and leaves all games as they were.
    ///
    /// Returns (observations, masks, rewards, dones, winners), each with N
    /// rows: `rewards` float32 is the result for the side that just moved
    /// (with `opponent="random"`: for `side`, after the opponent's reply)
    /// (+1 won, -1 lost, 0 draw or game goes on), `dones` whether its game
    /// ended (it is then restarted: that row's observation and mask are the
    /// new game's start), `winners` int8 is -1 while a game goes on, else 0
    /// (foxes won), 1 (geese won) or 2 (draw).
    ///
    /// With `copy=False` the observations and masks are two arrays that the
    /// batch keeps and overwrites on every `step(copy=False)` (Gymnasium's
    /// vector environments' `copy=False`): nothing is allocated per step,
    /// which is faster, most of all for large batches; use or copy them
    /// before the next step.
    #[pyo3(signature = (actions, copy=true))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: &Bound<'py, PyAny>,
        copy: bool,
    ) -> PyResult<StepResult<'py>> {
        let actions = read_actions(actions)?;
        let n = self.games.len();
        if actions.len() != n {
            return Err(value_error(format!(
                "{} actions for {n} games: give one action per game",
                actions.len()
            )));
        }
        let mut chosen: Vec<Move> = Vec::with_capacity(n);
        for (i, &action) in actions.iter().enumerate() {
            let legal = &self.legal[i];
            let pairs = || {
                let acts = self.legal_actions[i].iter().map(|&a| a as usize);
                acts.zip(legal.iter().copied())
            };
            let m = usize::try_from(action)
                .ok()
                .filter(|&a| a < actions::ACTION_SIZE)
                .and_then(|a| actions::resolve_among(pairs(), a))
                .ok_or_else(|| {
                    value_error(format!(
                        "game {i}: {}",
                        actions::why_not_legal(self.games[i].position(), legal, &action.into())
                    ))
                })?;
            chosen.push(m);
        }
        let (obs, mask, (rewards, dones, winners)) = if copy {
            let mut obs = vec![0.0f32; n * INPUT_SIZE];
            let mut mask = vec![false; n * actions::ACTION_SIZE];
            let results = py.detach(|| self.advance(&chosen, &mut obs, &mut mask));
            let (obs, mask) = to_arrays(py, n, obs, mask);
            (obs, mask, results)
        } else {
            let (obs, mask) = self.reused_arrays(py);
            let results = {
                let mut obs_rw = obs.try_readwrite().map_err(value_error)?;
                let mut mask_rw = mask.try_readwrite().map_err(value_error)?;
                let obs_out = obs_rw.as_slice_mut().map_err(value_error)?;
                let mask_out = mask_rw.as_slice_mut().map_err(value_error)?;
                py.detach(|| {
                    obs_out.fill(0.0);
                    mask_out.fill(false);
                    self.advance(&chosen, obs_out, mask_out)
                })
            };
            (obs, mask, results)
        };
        Ok((
            obs,
            mask,
            rewards.into_pyarray(py),
            dones.into_pyarray(py),
            winners.into_pyarray(py),
        ))
    }

    /// A uniformly random legal move of each game, as actions (int64, N).
    fn random_actions<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let rng = &mut self.rng;
        let out: Vec<i64> = self
            .legal_actions
            .iter()
            .map(|acts| acts[rng.random_range(0..acts.len())] as i64)
            .collect();
        out.into_pyarray(py)
    }

    /// Side to move of each game: 0 foxes, 1 geese (int8, N).
    fn sides<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i8>> {
        Array1::from_iter(self.games.iter().map(|g| side_code(g.position().side())))
            .into_pyarray(py)
    }

    /// The current position strings.
    fn fens(&self) -> Vec<String> {
        self.games.iter().map(|g| g.position().fen()).collect()
    }

    /// A copy of game `index` with its history (for agents: `Agent.choose`).
    fn game(&self, index: Int) -> PyResult<PyGame> {
        index
            .index_below("index", self.games.len())?
            .map(|i| PyGame {
                game: self.games[i].clone(),
            })
            .ok_or_else(|| {
                value_error(format!(
                    "game {index} does not exist: there are {} games",
                    self.games.len()
                ))
            })
    }
}

impl BatchGames {
    fn restart_all(&mut self) {
        for i in 0..self.games.len() {
            self.restart(i);
        }
    }

    fn restart(&mut self, i: usize) {
        self.games[i] = Game::new(self.start);
        self.generate(i);
        if self
            .agent_side
            .is_some_and(|agent| self.start.side() != agent)
        {
            // Checked at construction: no opening reply ends the game.
            self.play_random(i);
        }
    }

    /// Plays a uniformly random legal move in game `i` (which has one).
    fn play_random(&mut self, i: usize) {
        let legal = &self.legal[i];
        let m = legal[self.rng.random_range(0..legal.len())];
        self.games[i].play_unchecked(m);
        self.generate(i);
        self.plies += 1;
    }

    /// Game `i`'s legal moves and their actions, in its current position.
    fn generate(&mut self, i: usize) {
        self.legal[i].clear();
        self.games[i].position().generate(&mut self.legal[i]);
        self.legal_actions[i].clear();
        let acts = self.legal[i].iter().map(|&m| actions::action_of(m) as u16);
        self.legal_actions[i].extend(acts);
    }

    /// Writes game `i`'s planes and legal-action mask into row `i` of the
    /// zeroed buffers.
    fn write_arrays(&self, i: usize, obs: &mut [f32], mask: &mut [bool]) {
        encode_game(
            &self.games[i],
            &mut obs[i * INPUT_SIZE..(i + 1) * INPUT_SIZE],
        );
        let row = &mut mask[i * actions::ACTION_SIZE..(i + 1) * actions::ACTION_SIZE];
        for &a in &self.legal_actions[i] {
            row[a as usize] = true;
        }
    }

    /// The arrays `step(copy=False)` reuses, made on first use.
    fn reused_arrays<'py>(&mut self, py: Python<'py>) -> (Observations<'py>, Masks<'py>) {
        let n = self.games.len();
        let (obs, mask) = self.reused.get_or_insert_with(|| {
            let [planes, rows, files] = OBS_SHAPE;
            (
                PyArray4::zeros(py, [n, planes, rows, files], false).unbind(),
                PyArray2::zeros(py, [n, actions::ACTION_SIZE], false).unbind(),
            )
        });
        (obs.bind(py).clone(), mask.bind(py).clone())
    }

    /// Plays `chosen[i]` in game `i`, applies the end rules, restarts the
    /// games that ended, writes the observations and masks into `obs` and
    /// `mask` (all zeros on entry), and returns the rewards, done flags and
    /// winners of `step`.
    fn advance(
        &mut self,
        chosen: &[Move],
        obs: &mut [f32],
        mask: &mut [bool],
    ) -> (Vec<f32>, Vec<bool>, Vec<i8>) {
        let n = self.games.len();
        let mut rewards = vec![0.0f32; n];
        let mut dones = vec![false; n];
        let mut winners = vec![RUNNING; n];
        for (i, &m) in chosen.iter().enumerate() {
            let mover = self.games[i].position().side();
            let perspective = self.agent_side.unwrap_or(mover);
            self.games[i].play_unchecked(m);
            self.generate(i);
            let mut has_move = !self.legal[i].is_empty();
            let mut outcome = self.games[i].outcome_given(has_move);
            if outcome.is_none() && self.agent_side.is_some() {
                self.play_random(i);
                has_move = !self.legal[i].is_empty();
                outcome = self.games[i].outcome_given(has_move);
            }
            if let Some(outcome) = outcome {
                rewards[i] = outcome.value_for(perspective) as f32;
                dones[i] = true;
                winners[i] = outcome.winner.map_or(DRAW, side_code);
                self.finished += 1;
                self.restart(i);
            }
            self.write_arrays(i, obs, mask);
        }
        self.plies += n as u64;
        (rewards, dones, winners)
    }
}

/// The actions as i64, from an int64 or int32 NumPy array or any sequence
/// of integers (Python's or NumPy's, of any size: one past i64 is out of
/// range like any other). A bool array or a bool among them raises
/// TypeError (pyo3 would read True as action 1).
fn read_actions(actions: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    if let Ok(a) = actions.extract::<PyReadonlyArray1<i64>>() {
        return Ok(a.as_array().to_vec());
    }
    if let Ok(a) = actions.extract::<PyReadonlyArray1<i32>>() {
        return Ok(a.as_array().iter().map(|&x| x as i64).collect());
    }
    if actions.extract::<PyReadonlyArray1<bool>>().is_ok() {
        return Err(PyTypeError::new_err(
            "actions must be integers, not a bool array",
        ));
    }
    let not_actions =
        || value_error("actions must be a 1-D array or sequence of integers, one per game");
    let items: Vec<Int> = actions.extract().map_err(|_| not_actions())?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Int::Other(_) => Err(not_actions()),
            Int::Bool(_) => item.integer(&format!("actions[{i}]")).map(|_| 0),
            // Out of i64: out of range, said with its own digits.
            _ => item
                .integer("action")?
                .and_then(|v| i64::try_from(v).ok())
                .ok_or_else(|| value_error(format!("game {i}: {}", actions::out_of_range(item)))),
        })
        .collect()
}

fn to_arrays(
    py: Python<'_>,
    n: usize,
    obs: Vec<f32>,
    mask: Vec<bool>,
) -> (Observations<'_>, Masks<'_>) {
    let [planes, rows, files] = OBS_SHAPE;
    let obs =
        Array4::from_shape_vec((n, planes, rows, files), obs).expect("one observation per game");
    let mask = Array2::from_shape_vec((n, actions::ACTION_SIZE), mask).expect("one mask per game");
    (obs.into_pyarray(py), mask.into_pyarray(py))
}
