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

# The extension links libtorch (network agents run on it) and loads the one
# of the `torch` package in this environment: imported first, torch's
# libraries are already in the process when the extension needs them, so
# whichever of `import halatafl` and `import torch` comes first, one
# libtorch is loaded. The extension is built against one torch release.
_TORCH_RELEASE = "2.13"
try:
    import torch as _torch
except ImportError as _e:  # pragma: no cover - torch is a dependency
    raise ImportError(
        f"halatafl needs PyTorch {_TORCH_RELEASE}.x, whose libtorch its network agents run on: "
        f"pip install 'torch>={_TORCH_RELEASE},<2.14'"
    ) from _e
if _torch.__version__.split("+")[0].rsplit(".", 1)[0] != _TORCH_RELEASE:
    raise ImportError(
        f"halatafl was built against PyTorch {_TORCH_RELEASE}.x and this environment has torch "
        f"{_torch.__version__}: its extension would bind to another libtorch's symbols. Install "
        f"'torch>={_TORCH_RELEASE},<2.14' beside it (pip install 'torch>={_TORCH_RELEASE},<2.14'), "
        "or build halatafl against your torch (docs/python.md, \"PyTorch\")"
    )

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
