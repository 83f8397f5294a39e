"""Two Foxes (Halatafl) and classic Fox and Geese for Python.

The rules engine, the network's input encoding, the project's agents and a
batched API for vectorized training, all in Rust (the halatafl workspace),
with Gymnasium and PettingZoo environments in :mod:`halatafl.envs`.

>>> import halatafl
>>> game = halatafl.Game()
>>> game.play("c7-d6")
>>> halatafl.Agent("alphabeta:depth=2").choose(game).move in game.legal_moves()
True

Actions are a fixed space of ``ACTION_SIZE`` = 1089 integers: see
``ACTION_SPACE_DOC``.
"""

from ._halatafl import (
    ACTION_SIZE,
    AGENT_FORMS,
    ENCODING_VERSION,
    MAX_GAME_LENGTH,
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

# A constant rather than a docstring, so it exists under `python -OO` too.
ACTION_SPACE_DOC = """\
Actions: a fixed space of ACTION_SIZE = 33 x 33 = 1089 integers,
from_slot * 33 + to_slot, where a slot numbers the 33 points row 1 first,
left to right (point_names(): c1 is 0, e7 is 32), `from` is the point the
moving piece leaves and `to` the point where it ends (a step's destination,
a jump chain's final landing point). A step and a chain never share both
points (a chain moves an even number of cells along both axes). When two
legal chains share both points, the action names the one capturing the most
geese, then the first in move-string order; the other chains of such a tie
are played through move strings only (loops around one square either way
take the same geese and reach the same position). Convert with
move_to_action, Game.action_to_move, action_points; mirror_action pairs with
Game.mirror and mirror_observation."""

__all__ = [
    "ACTION_SIZE",
    "ACTION_SPACE_DOC",
    "AGENT_FORMS",
    "ENCODING_VERSION",
    "MAX_GAME_LENGTH",
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
