//! `halatafl._halatafl`: the native part of the `halatafl` Python package.
//!
//! It exposes the rules engine ([`PyGame`]), the network's input encoding,
//! the fixed action space ([`actions`]), the agents of the command-line
//! program built from the same spec strings ([`PyAgent`]), and many games
//! stepped at once ([`batch::BatchGames`]). The Gymnasium and PettingZoo
//! environments are Python (python/halatafl/envs.py) on top of these.
//!
//! Bad input from Python (a position, move, variant, spec or action) raises
//! `ValueError` with the message the CLI gives; it is checked before anything
//! that could panic, so no panic crosses into the interpreter. Integer
//! arguments are read whole ([`args::Int`]): out of range is a `ValueError`
//! at any size, a bool a `TypeError`. Searches run with the GIL released, on
//! a thread of their own while the caller's thread watches for signals
//! (Ctrl-C), see [`PyAgent::choose`].

mod actions;
mod args;
mod batch;
mod bench;

use args::Int;
use halatafl_agent::{Agent, Budget, Decision, StopSignal, MAX_MOVETIME_MS};
use halatafl_nn::encoding;
use halatafl_rules::{Game, Outcome, Position, Variant};
use numpy::ndarray::Array3;
use numpy::{IntoPyArray, PyArray1, PyArray3, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// Shape of one observation: the encoding's planes over the 7x7 grid.
pub const OBS_SHAPE: [usize; 3] = [encoding::INPUT_PLANES, 7, 7];

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Parses a variant the way the engine protocol's `variant` command does:
/// `two-foxes`, `two-foxes corner-links`, `classic geese=15 sideways`.
pub(crate) fn parse_variant(text: &str) -> PyResult<Variant> {
    text.parse::<Variant>().map_err(value_error)
}

/// The start position of `variant`, or `fen` read in it (the CLI's `--fen`
/// message on error).
pub(crate) fn parse_position(fen: Option<&str>, variant: Variant) -> PyResult<Position> {
    match fen {
        None => Ok(Position::start(variant)),
        Some(text) => Position::from_fen(text, variant)
            .map_err(|e| value_error(format!("bad position \"{text}\": {e}"))),
    }
}

/// The encoding's planes of the current position of `game` into `out`,
/// which must be all zeros (a freshly zeroed buffer).
pub(crate) fn encode_game(game: &Game, out: &mut [f32]) {
    encoding::encode_into_zeroed(game.position(), game.repetitions(), out);
}

/// How a game ended: `winner` is "foxes", "geese" or None (a draw), `reason`
/// one of the rule names ("pen-filled", "fewer-than-nine", "no-moves",
/// "threefold", "fifty-moves", "fewer-than-four").
#[pyclass(name = "Outcome", module = "halatafl", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyOutcome {
    inner: Outcome,
}

#[pymethods]
impl PyOutcome {
    #[getter]
    fn winner(&self) -> Option<&'static str> {
        self.inner.winner.map(|s| s.name())
    }

    #[getter]
    fn reason(&self) -> &'static str {
        self.inner.reason.name()
    }

    /// "foxes", "geese" or "draw", as in the arena's CSV files.
    #[getter]
    fn result(&self) -> &'static str {
        self.inner.result_word()
    }

    /// +1 if `side` won, -1 if it lost, 0 for a draw.
    fn value_for(&self, side: &str) -> PyResult<i32> {
        let side = side.parse().map_err(value_error)?;
        Ok(self.inner.value_for(side))
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Outcome('{}')", self.inner)
    }
}

/// What `Game.__reduce__` returns: the function that rebuilds a game and
/// its arguments (start position, variant, moves).
type Reduced<'py> = (Bound<'py, PyAny>, (String, String, Vec<String>));

/// A game of Two Foxes or classic Fox and Geese with its history (for the
/// repetition rule): `Game(fen=None, variant="two-foxes")`.
#[pyclass(name = "Game", module = "halatafl")]
#[derive(Clone)]
pub struct PyGame {
    pub(crate) game: Game,
}

#[pymethods]
impl PyGame {
    #[new]
    #[pyo3(signature = (fen=None, variant="two-foxes"))]
    fn new(fen: Option<&str>, variant: &str) -> PyResult<PyGame> {
        let variant = parse_variant(variant)?;
        Ok(PyGame {
            game: Game::new(parse_position(fen, variant)?),
        })
    }

    /// The current position string (`<placement> <side> <quiet>`).
    fn fen(&self) -> String {
        self.game.position().fen()
    }

    /// The variant in the engine protocol's words (`classic geese=15 sideways`).
    #[getter]
    fn variant(&self) -> String {
        self.game.position().variant().to_string()
    }

    /// "foxes" or "geese": the side to move.
    #[getter]
    fn side(&self) -> &'static str {
        self.game.position().side().name()
    }

    /// The side to move as an integer: 0 foxes (who move first), 1 geese
    /// (OpenSpiel's player numbers).
    #[getter]
    fn player(&self) -> u8 {
        match self.game.position().side() {
            halatafl_rules::Side::Foxes => 0,
            halatafl_rules::Side::Geese => 1,
        }
    }

    /// The position string the game started from (its history begins there).
    fn start_fen(&self) -> String {
        self.game.start_position().fen()
    }

    /// An upper bound on the plies this game can still last, by the rules
    /// alone (see `max_plies_left`); `halatafl.MAX_GAME_LENGTH` is its value
    /// at Two Foxes' start.
    fn max_remaining_plies(&self) -> u64 {
        if self.game.outcome().is_some() {
            return 0;
        }
        max_plies_left(self.game.position())
    }

    /// Plies played in this game.
    #[getter]
    fn ply(&self) -> usize {
        self.game.ply()
    }

    /// Plies since the last capture or forward goose step.
    #[getter]
    fn quiet(&self) -> u16 {
        self.game.position().quiet()
    }

    /// How many times the current position has stood on the board, counting now.
    fn repetitions(&self) -> usize {
        self.game.repetitions()
    }

    /// The legal moves as move strings (none once the game is over).
    fn legal_moves(&self) -> Vec<String> {
        if self.game.outcome().is_some() {
            return Vec::new();
        }
        self.game
            .position()
            .legal_moves()
            .iter()
            .map(|m| m.to_string())
            .collect()
    }

    /// The legal actions, ascending (none once the game is over).
    fn legal_actions(&self) -> Vec<usize> {
        if self.game.outcome().is_some() {
            return Vec::new();
        }
        actions::legal_actions(&self.game.position().legal_moves())
    }

    /// Boolean mask over the 1089 actions (all false once the game is over).
    fn action_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        let mut mask = vec![false; actions::ACTION_SIZE];
        if self.game.outcome().is_none() {
            actions::fill_mask(&self.game.position().legal_moves(), &mut mask);
        }
        mask.into_pyarray(py)
    }

    /// Plays a move string (`c7-d6`, `c5xe5xe3`); ValueError if malformed,
    /// illegal or after the end.
    fn play(&mut self, mv: &str) -> PyResult<()> {
        self.game.play_str(mv).map(|_| ()).map_err(value_error)
    }

    /// Plays an action; returns the move string it named.
    fn play_action(&mut self, action: Int) -> PyResult<String> {
        let m = self.resolve_action(&action)?;
        self.game.play_unchecked(m);
        Ok(m.to_string())
    }

    /// The move string an action names here (by the tie rule of
    /// `halatafl.ACTION_SPACE_DOC`); ValueError if it is not legal.
    fn action_to_move(&self, action: Int) -> PyResult<String> {
        self.resolve_action(&action).map(|m| m.to_string())
    }

    /// Takes back the last move; returns it, or None at the start.
    fn undo(&mut self) -> Option<String> {
        self.game.undo().map(|m| m.to_string())
    }

    /// Takes back the last move; returns its action (as `play_action` takes
    /// it), or None at the start.
    fn undo_action(&mut self) -> Option<usize> {
        self.game.undo().map(actions::action_of)
    }

    /// The moves played, as move strings.
    fn moves(&self) -> Vec<String> {
        self.game.moves().iter().map(|m| m.to_string()).collect()
    }

    /// The outcome by the five end rules, or None while the game goes on.
    fn outcome(&self) -> Option<PyOutcome> {
        self.game.outcome().map(|inner| PyOutcome { inner })
    }

    fn is_over(&self) -> bool {
        self.game.outcome().is_some()
    }

    /// The network's input planes of the current position, float32
    /// (10, 7, 7): exactly what the Rust network sees (encoding version
    /// `halatafl.ENCODING_VERSION`).
    fn observation<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray3<f32>> {
        let mut planes = vec![0.0; encoding::INPUT_SIZE];
        encode_game(&self.game, &mut planes);
        Array3::from_shape_vec(OBS_SHAPE, planes)
            .expect("INPUT_SIZE is the product of OBS_SHAPE")
            .into_pyarray(py)
    }

    /// A new game from the left-right mirror of the current position (its
    /// history is not carried over).
    fn mirror(&self) -> PyGame {
        PyGame {
            game: Game::new(self.game.position().mirror()),
        }
    }

    fn copy(&self) -> PyGame {
        self.clone()
    }

    fn __copy__(&self) -> PyGame {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGame {
        self.clone()
    }

    /// Pickles as the start position, the variant and the moves: unpickling
    /// replays them, so the history (repetitions) comes back whole.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let restore = py
            .import("halatafl._halatafl")?
            .getattr("_game_from_moves")?;
        Ok((
            restore,
            (
                self.game.start_position().fen(),
                self.game.position().variant().to_string(),
                self.moves(),
            ),
        ))
    }

    /// The board drawn as `halatafl play` shows it.
    fn __str__(&self) -> String {
        halatafl_program::board_text::draw_board(self.game.position())
    }

    fn __repr__(&self) -> String {
        format!(
            "Game('{}', variant='{}', ply={})",
            self.game.position().fen(),
            self.game.position().variant(),
            self.game.ply()
        )
    }
}

impl PyGame {
    fn resolve_action(&self, action: &Int) -> PyResult<halatafl_rules::Move> {
        let index = action.index_below("action", actions::ACTION_SIZE)?;
        if let Some(outcome) = self.game.outcome() {
            return Err(value_error(format!(
                "action {action} played after the game ended: {outcome}"
            )));
        }
        let position = self.game.position();
        let moves = position.legal_moves();
        index
            .and_then(|a| actions::resolve(&moves, a))
            .ok_or_else(|| value_error(actions::why_not_legal(position, &moves, action)))
    }
}

/// An upper bound on the plies a game can still last from `position`, by
/// the rules alone. Every ply either resets the quiet count (a capture or a
/// forward goose step) or is quiet, and 100 quiet plies in a row end the
/// game. Forward steps are bounded by the rows the geese can still climb
/// (each forward or diagonally forward step climbs one row, never undone),
/// and capture plies by the geese that can be taken before too few remain
/// (each takes at least one). So with R such plies left, at most
/// `R + 99 R + (100 - quiet)` plies remain. Loose (geese cannot all reach
/// row 7, and repetitions end shuffling sooner) but sure, as OpenSpiel's
/// `max_game_length` must be.
pub(crate) fn max_plies_left(position: &Position) -> u64 {
    let geese = position.geese();
    let climbs: u64 = geese.map(|p| (6 - p.row()) as u64).sum();
    let needed = u64::from(position.variant().geese_needed());
    let captures = (u64::from(geese.count()) + 1).saturating_sub(needed);
    let resets = climbs + captures;
    100 * resets + 100u64.saturating_sub(u64::from(position.quiet()))
}

/// Rebuilds a pickled [`PyGame`]: the start position and the moves replayed.
#[pyfunction]
fn _game_from_moves(start_fen: &str, variant: &str, moves: Vec<String>) -> PyResult<PyGame> {
    let variant = parse_variant(variant)?;
    let mut game = Game::new(parse_position(Some(start_fen), variant)?);
    for (i, mv) in moves.iter().enumerate() {
        game.play_str(mv)
            .map_err(|e| value_error(format!("move {} `{mv}`: {e}", i + 1)))?;
    }
    Ok(PyGame { game })
}

/// An agent's answer: the move (string and action), its value for the side
/// to move when it has one, and search statistics.
#[pyclass(name = "Decision", module = "halatafl", frozen, get_all)]
pub struct PyDecision {
    #[pyo3(name = "move")]
    mv: String,
    action: usize,
    value: Option<f32>,
    depth: u32,
    nodes: u64,
    pv: Vec<String>,
    extra: String,
}

#[pymethods]
impl PyDecision {
    fn __repr__(&self) -> String {
        let value = self.value.map_or("None".to_string(), |v| v.to_string());
        format!(
            "Decision(move='{}', action={}, value={value}, depth={}, nodes={}, pv={:?}, extra='{}')",
            self.mv, self.action, self.depth, self.nodes, self.pv, self.extra
        )
    }
}

// `choose`'s bounds are the engine protocol's and the specs' own
// (`halatafl_program::limits`); tests/test_agents.py checks the messages.
use halatafl_program::limits::{MAX_DEPTH, MAX_SIMS};

/// How often the thread that called `choose` looks for a signal (Ctrl-C)
/// while the search runs on its own thread.
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// A player built from a spec string, exactly as the CLI builds it:
/// `random`, `alphabeta:depth=4`, `mcts:sims=200`, `net:ckpt=PATH,sims=N`,
/// `best`. `Agent(spec, seed=0, variant="two-foxes")`.
#[pyclass(name = "Agent", module = "halatafl")]
pub struct PyAgent {
    /// A Mutex only to make the class `Sync` for pyo3; calls take `&mut self`.
    agent: Mutex<Box<dyn Agent>>,
    variant: Variant,
    /// Whether `choose` searches (every kind but `random`, which answers at
    /// once): a search runs on a thread of its own so that Ctrl-C can stop
    /// it; `random` skips that thread's cost (tens of microseconds a move).
    searches: bool,
}

#[pymethods]
impl PyAgent {
    #[new]
    #[pyo3(signature = (spec, seed=Int::from(0), variant="two-foxes"))]
    #[pyo3(text_signature = "(spec, seed=0, variant=\"two-foxes\")")]
    fn new(py: Python<'_>, spec: &str, seed: Int, variant: &str) -> PyResult<PyAgent> {
        let variant = parse_variant(variant)?;
        let seed = seed.non_negative("seed")?;
        // Loading a network can take a moment: let other threads run.
        let agent = py
            .detach(|| halatafl_program::agents::build_agent(spec, seed, variant))
            .map_err(value_error)?;
        let searches = agent.spec() != "random";
        Ok(PyAgent {
            agent: Mutex::new(agent),
            variant,
            searches,
        })
    }

    /// The spec as the arena writes it in CSV files.
    #[getter]
    fn spec(&mut self) -> String {
        self.agent_mut().spec()
    }

    /// Picks a move for the side to move in `game`, searching with the GIL
    /// released. The spec's limits apply; `movetime_ms`, `depth` and `sims`
    /// add limits for this move (the first reached ends the search), within
    /// the bounds of the specs and the engine's `go`: 1 to 86,400,000 ms
    /// (one day), 1 to 100 plies, 1 to 10,000,000 simulations.
    ///
    /// Ctrl-C (any signal whose Python handler raises) stops the search
    /// within about 50 ms and raises its exception, `KeyboardInterrupt`: the
    /// search runs on a thread of its own while this thread checks for
    /// signals, and is stopped by its budget's stop signal, as the engine's
    /// `stop` command stops it. The agent stays usable.
    #[pyo3(signature = (game, movetime_ms=None, depth=None, sims=None))]
    fn choose(
        &mut self,
        py: Python<'_>,
        game: &PyGame,
        movetime_ms: Option<Int>,
        depth: Option<Int>,
        sims: Option<Int>,
    ) -> PyResult<PyDecision> {
        // The bounds of the agent specs and of the engine protocol's `go`
        // (crates/agent, crates/alphabeta, crates/mcts), so that a budget
        // that the CLI refuses is refused here too.
        let limit = |name: &str, value: Option<Int>, most: u32, unit: &str| {
            value
                .map(|v| v.in_range(name, 1, most.into(), unit).map(|v| v as u32))
                .transpose()
        };
        let movetime_ms = movetime_ms
            .map(|v| v.in_range("movetime_ms", 1, MAX_MOVETIME_MS, " ms (one day)"))
            .transpose()?;
        let depth = limit("depth", depth, MAX_DEPTH, " plies")?;
        let sims = limit("sims", sims, MAX_SIMS, "")?;
        if let Some(outcome) = game.game.outcome() {
            return Err(value_error(format!(
                "the game is over ({outcome}): there is no move to choose"
            )));
        }
        if game.game.position().variant() != self.variant {
            return Err(value_error(format!(
                "the agent was built for `{}`, the game is `{}`",
                self.variant,
                game.game.position().variant()
            )));
        }
        let stop = StopSignal::new();
        let budget = Budget {
            depth,
            sims,
            movetime: movetime_ms.map(Duration::from_millis),
            stop: Some(stop.clone()),
        };
        let snapshot = game.game.clone();
        let searches = self.searches;
        let agent = self.agent_mut();
        let decision = if searches {
            search_interruptibly(py, agent.as_mut(), &snapshot, &budget, &stop)?
        } else {
            py.detach(|| agent.choose(&snapshot, &budget))
        };
        Ok(PyDecision {
            mv: decision.mv.to_string(),
            action: actions::action_of(decision.mv),
            value: decision.value,
            depth: decision.info.depth,
            nodes: decision.info.nodes,
            pv: decision.info.pv.iter().map(|m| m.to_string()).collect(),
            extra: decision.info.extra,
        })
    }

    /// A new game starts: forget trees, reseed tie-breaks and noise.
    fn new_game(&mut self, seed: Int) -> PyResult<()> {
        let seed = seed.non_negative("seed")?;
        self.agent_mut().new_game(seed);
        Ok(())
    }

    fn __repr__(&mut self) -> String {
        format!("Agent('{}')", self.agent_mut().spec())
    }
}

impl PyAgent {
    fn agent_mut(&mut self) -> &mut Box<dyn Agent> {
        self.agent
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Runs `agent.choose` on a thread of its own while the calling thread,
/// attached to Python only between waits of [`SIGNAL_CHECK_INTERVAL`], runs
/// the interpreter's signal handlers (`Python::check_signals`: only the main
/// thread has any to run). When a handler raises (Ctrl-C's
/// `KeyboardInterrupt`), the search is stopped through `stop`, as the
/// engine's `stop` command does, joined (it answers within a few
/// milliseconds of the signal: searches read it where they read their
/// deadline), and the exception is returned; its move is dropped.
fn search_interruptibly(
    py: Python<'_>,
    agent: &mut dyn Agent,
    game: &Game,
    budget: &Budget,
    stop: &StopSignal,
) -> PyResult<Decision> {
    std::thread::scope(|scope| {
        let (done_tx, mut done) = mpsc::sync_channel::<()>(1);
        let search = scope.spawn(move || {
            let decision = agent.choose(game, budget);
            // The receiver may be gone only if this function has returned,
            // which it does not before joining this thread.
            let _ = done_tx.send(());
            decision
        });
        let interrupted = loop {
            // A channel closed without a message is a search that panicked:
            // the join below passes the panic on.
            let (waited, receiver) = py.detach(move || {
                let waited = done.recv_timeout(SIGNAL_CHECK_INTERVAL);
                (waited, done)
            });
            done = receiver;
            if !matches!(waited, Err(mpsc::RecvTimeoutError::Timeout)) {
                break None;
            }
            if let Err(e) = py.check_signals() {
                stop.stop();
                break Some(e);
            }
        };
        let joined = py.detach(move || search.join());
        let decision = joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match interrupted {
            Some(e) => Err(e),
            None => Ok(decision),
        }
    })
}

/// The action of a move string (its first and last point); needs no
/// position, so it does not check legality.
#[pyfunction]
fn move_to_action(mv: &str) -> PyResult<usize> {
    actions::action_of_text(mv).map_err(value_error)
}

fn checked_action(action: &Int) -> PyResult<usize> {
    action
        .index_below("action", actions::ACTION_SIZE)?
        .ok_or_else(|| value_error(actions::out_of_range(action)))
}

/// The (from, to) point names of an action, e.g. (\"c7\", \"d6\").
#[pyfunction]
fn action_points(action: Int) -> PyResult<(String, String)> {
    let (from, to) = actions::points_of(checked_action(&action)?);
    Ok((from.to_string(), to.to_string()))
}

/// The action in the left-right mirror (pairs with `Game.mirror` and
/// `mirror_observation`).
#[pyfunction]
fn mirror_action(action: Int) -> PyResult<usize> {
    Ok(actions::mirror_action(checked_action(&action)?))
}

/// The observation(s) of the mirrored position(s): float32 planes whose
/// last two axes are the 7x7 grid, e.g. (10, 7, 7) or (N, 10, 7, 7).
#[pyfunction]
fn mirror_observation<'py>(
    py: Python<'py>,
    obs: PyReadonlyArrayDyn<'py, f32>,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let view = obs.as_array();
    let shape = view.shape().to_vec();
    if shape.len() < 2 || shape[shape.len() - 1] != 7 || shape[shape.len() - 2] != 7 {
        return Err(value_error(format!(
            "observation shape {shape:?}: the last two axes must be the 7x7 grid"
        )));
    }
    let flat: Vec<f32> = view.iter().copied().collect();
    let mirrored = encoding::mirror_planes(&flat);
    mirrored.into_pyarray(py).reshape(shape)
}

/// The 33 point names in slot order (the action space's numbering).
#[pyfunction]
fn point_names() -> Vec<String> {
    (0..actions::POINTS)
        .map(|s| actions::point_of_slot(s).to_string())
        .collect()
}

#[pymodule]
fn _halatafl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGame>()?;
    m.add_class::<PyOutcome>()?;
    m.add_class::<PyAgent>()?;
    m.add_class::<PyDecision>()?;
    m.add_class::<batch::BatchGames>()?;
    m.add_function(wrap_pyfunction!(move_to_action, m)?)?;
    m.add_function(wrap_pyfunction!(action_points, m)?)?;
    m.add_function(wrap_pyfunction!(mirror_action, m)?)?;
    m.add_function(wrap_pyfunction!(mirror_observation, m)?)?;
    m.add_function(wrap_pyfunction!(point_names, m)?)?;
    m.add_function(wrap_pyfunction!(_game_from_moves, m)?)?;
    m.add(
        "MAX_GAME_LENGTH",
        max_plies_left(&Position::start(Variant::two_foxes())),
    )?;
    m.add_function(wrap_pyfunction!(bench::rust_random_playouts, m)?)?;
    m.add("ACTION_SIZE", actions::ACTION_SIZE)?;
    m.add("ENCODING_VERSION", encoding::ENCODING_VERSION)?;
    m.add("OBS_SHAPE", OBS_SHAPE.to_vec())?;
    m.add("START_FEN", halatafl_rules::START_FEN)?;
    m.add("AGENT_FORMS", halatafl_program::agents::AGENT_FORMS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
