"""Two Foxes and classic Fox and Geese as OpenSpiel games.

``import halatafl.openspiel`` registers two games with ``pyspiel``:

- ``halatafl``: Two Foxes; parameter ``corner_links`` (bool, default False).
- ``fox_and_geese``: classic Fox and Geese; parameters ``geese`` (13, 15 or
  17, default 13), ``sideways`` (bool, default False) and ``corner_links``.

>>> import pyspiel, halatafl.openspiel
>>> game = pyspiel.load_game("fox_and_geese(geese=15,sideways=True)")

Players are integers: 0 the foxes (who move first), 1 the geese. Actions are
the package's fixed space (``halatafl.ACTION_SPACE_DOC``, 1089 actions); the
rules are the Rust engine's, with every end rule (repetition and the
fifty-move rule included), so the terminal returns are +1/-1 for a win and 0
for a draw. ``max_game_length`` is a sure bound from the start position
(``Game.max_remaining_plies``: 9,500 plies for Two Foxes), far above real
games (a few hundred plies). Observation tensors are the network's input
planes (10, 7, 7) flattened (``halatafl.ENCODING_VERSION``); the observation
string is the position string. States clone, pickle and serialize
(``pyspiel.serialize_game_and_state``). ``undo_action`` is not available:
pyspiel keeps a Python game's history itself (clone before applying, or use
``halatafl.Game.undo_action``).

``HalataflBot(game, spec, seed=0)`` plays any agent spec of the package
(``"alphabeta:depth=4"``, ``"mcts:sims=200"``, ``"best"``) as a ``pyspiel.Bot``,
so OpenSpiel's ``evaluate_bots`` pits them against OpenSpiel's own bots.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from . import _halatafl as _hf

_PLAYERS = ("foxes", "geese")
_OBS_SIZE = int(np.prod(_hf.OBS_SHAPE))


def _game_type(short_name: str, long_name: str, parameters: dict) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters,
    )


TWO_FOXES_TYPE = _game_type("halatafl", "Two Foxes (Halatafl)", {"corner_links": False})
CLASSIC_TYPE = _game_type(
    "fox_and_geese",
    "Fox and Geese (classic)",
    {"geese": 13, "sideways": False, "corner_links": False},
)


def _variant(short_name: str, params: dict) -> str:
    """The package's variant string for a game's parameters."""
    words = ["two-foxes"]
    if short_name == "fox_and_geese":
        geese = int(params.get("geese", 13))
        if geese not in (13, 15, 17):
            raise ValueError(f"fox_and_geese: geese={geese}: the classic game has 13, 15 or 17 geese")
        words = ["classic", f"geese={geese}"]
        if params.get("sideways", False):
            words.append("sideways")
    if params.get("corner_links", False):
        words.append("corner-links")
    return " ".join(words)


class HalataflGame(pyspiel.Game):
    """Two Foxes (``halatafl``) or classic Fox and Geese (``fox_and_geese``)."""

    def __init__(self, params=None, game_type: pyspiel.GameType = TWO_FOXES_TYPE):
        params = dict(params or {})
        self.variant = _variant(game_type.short_name, params)
        start = _hf.Game(None, self.variant)
        info = pyspiel.GameInfo(
            num_distinct_actions=_hf.ACTION_SIZE,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=int(start.max_remaining_plies()),
        )
        super().__init__(game_type, info, params)

    def new_initial_state(self):
        return HalataflState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return PlanesObserver(params)


class ClassicGame(HalataflGame):
    def __init__(self, params=None):
        super().__init__(params, CLASSIC_TYPE)


class HalataflState(pyspiel.State):
    """A game in progress: the Rust game with its history."""

    def __init__(self, game: HalataflGame):
        super().__init__(game)
        self.game_ = _hf.Game(None, game.variant)

    def current_player(self):
        if self.game_.is_over():
            return pyspiel.PlayerId.TERMINAL
        return self.game_.player

    def _legal_actions(self, player):
        if player != self.current_player():
            return []
        return self.game_.legal_actions()

    def _apply_action(self, action):
        self.game_.play_action(int(action))

    def undo_action(self, player, action):
        """Not available: pyspiel keeps a Python game's action history in C++
        and gives Python no way to shorten it. Clone the state before
        applying (as OpenSpiel's MCTS does), or use ``halatafl.Game``, whose
        ``undo_action`` takes the last action back."""
        raise pyspiel.SpielError(
            f"undo_action({player}, {action}): OpenSpiel's Python games cannot take actions back "
            "(pyspiel holds their history); clone() the state before applying the action, "
            "or play on a halatafl.Game, which has undo_action()"
        )

    def _action_to_string(self, player, action):
        if not self.game_.is_over() and player == self.game_.player:
            try:
                return self.game_.action_to_move(int(action))
            except ValueError:
                pass
        start, end = _hf.action_points(int(action))
        return f"{start}>{end}"

    def is_terminal(self):
        return self.game_.is_over()

    def returns(self):
        outcome = self.game_.outcome()
        if outcome is None:
            return [0.0, 0.0]
        return [float(outcome.value_for(side)) for side in _PLAYERS]

    def __str__(self):
        return self.game_.fen()

class PlanesObserver:
    """The network's input planes as the observation tensor, the position
    string as the observation string (the PyObserver interface)."""

    def __init__(self, params=None):
        if params:
            raise ValueError(f"observation parameters are not supported; given {params}")
        self.tensor = np.zeros(_OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor.reshape(tuple(_hf.OBS_SHAPE))}

    def set_from(self, state: HalataflState, player: int):
        del player  # perfect information: the same for both players
        self.tensor[:] = state.game_.observation().reshape(-1)

    def string_from(self, state: HalataflState, player: int):
        del player
        return state.game_.fen()


class HalataflBot(pyspiel.Bot):
    """A halatafl agent as an OpenSpiel bot: ``HalataflBot(game, spec,
    seed=0)`` for either player."""

    def __init__(self, game: HalataflGame, spec: str, seed: int = 0):
        pyspiel.Bot.__init__(self)
        variant = getattr(game, "variant", None)
        if variant is None:
            raise ValueError("HalataflBot plays the games of halatafl.openspiel (halatafl, fox_and_geese)")
        self.agent = _hf.Agent(spec, seed, variant)

    def step(self, state):
        return self.agent.choose(state.game_).action

    def restart_at(self, state):
        del state

    def inform_action(self, state, player_id, action):
        del state, player_id, action

    def provides_policy(self):
        return False


pyspiel.register_game(TWO_FOXES_TYPE, HalataflGame)
pyspiel.register_game(CLASSIC_TYPE, ClassicGame)
