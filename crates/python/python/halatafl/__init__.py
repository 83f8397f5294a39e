"""Two Foxes (Halatafl) and classic Fox and Geese for Python.

The rules engine, the network's input encoding, the project's agents and a
batched API for vectorized training, all in Rust (the halatafl workspace),
with Gymnasium and PettingZoo environments in :mod:`halatafl.envs`.

>>> import halatafl
>>> game = halatafl.Game()
>>> game.play("c7-d6")
>>> halatafl.Agent("alphabeta:depth=2").choose(game).move in game.legal_moves()
True

Actions: a fixed space of ``ACTION_SIZE`` = 33 x 33 = 1089 integers,
``from_slot * 33 + to_slot``, where a slot numbers the 33 points row 1 first,
left to right (``point_names()``), ``from`` is the point the piece leaves and
``to`` where it ends (a step's destination or a chain's final landing). When
two legal chains share both points, the action names the one capturing the
most geese, then the first in move-string order. See ``ACTION_SPACE_DOC``.
"""

from ._halatafl import (
    ACTION_SIZE,
    AGENT_FORMS,
    ENCODING_VERSION,
    OBS_SHAPE,
    START_FEN,
    Agent,
    BatchGames,
    Decision,
    Game,
    Outcome,
    __version__,
    action_points,
    mirror_action,
    mirror_observation,
    move_to_action,
    point_names,
    rust_random_playouts,
)

ACTION_SPACE_DOC = __doc__[__doc__.index("Actions:"):].strip()

__all__ = [
    "ACTION_SIZE",
    "ACTION_SPACE_DOC",
    "AGENT_FORMS",
    "ENCODING_VERSION",
    "OBS_SHAPE",
    "START_FEN",
    "Agent",
    "BatchGames",
    "Decision",
    "Game",
    "Outcome",
    "__version__",
    "action_points",
    "mirror_action",
    "mirror_observation",
    "move_to_action",
    "point_names",
    "rust_random_playouts",
]
