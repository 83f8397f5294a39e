"""Gymnasium and PettingZoo environments over the halatafl rules engine.

Both share the observation of the native API: a dict with
``"observation"``, the network's input planes (float32, shape (10, 7, 7),
encoding version ``halatafl.ENCODING_VERSION``), and ``"action_mask"``
(int8, shape (1089,), 1 for each legal action of the side to move). Actions
are ``Discrete(1089)``: ``from_slot * 33 + to_slot`` (``halatafl.ACTION_SPACE_DOC``).

Rewards are the game's result when it ends: +1 for a win, -1 for a loss, 0
for a draw (threefold repetition, fifty moves) and on every other step.
Every game ends by the rules (no truncation).

An action that is in range but not legal in the position is, by default
(``illegal_action="lose"``), a loss for the side that played it: the game
ends, that side gets -1 (the other side 0, as PettingZoo's classic games do)
and ``infos[...]["illegal_action"]`` is True. With ``illegal_action="raise"``
it raises ``ValueError`` and changes nothing. An action outside 0..1088 or
not an integer always raises ``ValueError``.

``gymnasium`` and ``pettingzoo`` are optional: each class needs its library
only when it is used.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _halatafl as _hf

SIDES = ("foxes", "geese")
_RENDER_MODES = (None, "ansi", "human")
_ILLEGAL_MODES = ("lose", "raise")
# The quiet-ply plane is quiet / 100; position strings allow up to 65535.
_OBS_HIGH = np.float32(65535 / 100)


_OBSERVATION_FORMS = ("planes", "flat")
_FLAT_SIZE = int(np.prod(_hf.OBS_SHAPE))


def _check_observation(observation: str) -> str:
    if observation not in _OBSERVATION_FORMS:
        raise ValueError(
            f"observation={observation!r}: expected 'planes' ((10, 7, 7), as the network sees it) "
            "or 'flat' (490 values, for Stable-Baselines3's MLP policies)"
        )
    return observation


def _spaces(observation: str = "planes"):
    from gymnasium import spaces

    shape = tuple(_hf.OBS_SHAPE) if observation == "planes" else (_FLAT_SIZE,)
    obs = spaces.Dict(
        {
            "observation": spaces.Box(low=0.0, high=_OBS_HIGH, shape=shape, dtype=np.float32),
            "action_mask": spaces.Box(
                low=0, high=1, shape=(_hf.ACTION_SIZE,), dtype=np.int8
            ),
        }
    )
    return obs, spaces.Discrete(_hf.ACTION_SIZE)


def _check_action(action) -> int:
    """The action as an int, or ValueError: booleans and non-integers refused."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral):
        if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(
            action.dtype, np.integer
        ):
            action = action.item()
        else:
            raise ValueError(
                f"action {action!r} is not an integer: actions are 0 to {_hf.ACTION_SIZE - 1}"
            )
    action = int(action)
    if not 0 <= action < _hf.ACTION_SIZE:
        raise ValueError(
            f"action {action} is out of range: actions are 0 to {_hf.ACTION_SIZE - 1}"
        )
    return action


def _check_mode(illegal_action: str) -> str:
    if illegal_action not in _ILLEGAL_MODES:
        raise ValueError(
            f"illegal_action={illegal_action!r}: expected 'lose' or 'raise'"
        )
    return illegal_action


def _check_render_mode(render_mode: str | None) -> str | None:
    if render_mode not in _RENDER_MODES:
        raise ValueError(
            f"render_mode={render_mode!r}: expected None, 'ansi' or 'human'"
        )
    return render_mode


def _observe(game: _hf.Game, with_mask: bool, observation: str = "planes", ended_mask: int = 0) -> dict:
    """The observation dict; `ended_mask` fills the mask when `with_mask` is
    False (0: no action, PettingZoo's convention; 1: any action, see
    HalataflEnv)."""
    if with_mask:
        mask = game.action_mask().astype(np.int8)
    else:
        mask = np.full(_hf.ACTION_SIZE, ended_mask, dtype=np.int8)
    planes = game.observation()
    if observation == "flat":
        planes = planes.reshape(-1)
    return {"observation": planes, "action_mask": mask}


def _render_text(game: _hf.Game) -> str:
    outcome = game.outcome()
    status = f"game over: {outcome}" if outcome else f"{game.side} to move"
    return f"{game}\n{game.fen()}   ({status})\n"


try:
    import gymnasium as _gym

    _GymBase = _gym.Env
except ImportError:  # pragma: no cover - gymnasium is optional
    _gym = None
    _GymBase = object


class HalataflEnv(_GymBase):
    """One side against an opponent agent, for Gymnasium.

    ``HalataflEnv(side="foxes", opponent="random", variant="two-foxes",
    fen=None, illegal_action="lose", render_mode=None,
    observation="planes")``: the opponent is any agent spec of the CLI
    (``"alphabeta:depth=2"``, ``"mcts:sims=100"``, ``"best"``), seeded from
    ``reset(seed=...)``. When the opponent moves first, ``reset`` plays its
    move before returning.

    ``observation="flat"`` gives the planes as one vector of 490 values, the
    form Stable-Baselines3's checker accepts without warnings (it takes any
    3-D box for an image, which these planes are not). ``action_masks()``
    returns the legal actions as booleans (sb3-contrib's ``MaskablePPO``
    convention).

    The observation that ends an episode has a mask of all ones: there is
    no legal move, and Gymnasium's vector environments (next-step autoreset)
    hand that observation to the policy once, whose action the next step
    ignores while it resets; an all-zero mask would break a masked sampler
    there. ``info["outcome"]`` says how the game ended.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        side: str = "foxes",
        opponent: str = "random",
        variant: str = "two-foxes",
        fen: str | None = None,
        illegal_action: str = "lose",
        render_mode: str | None = None,
        observation: str = "planes",
    ):
        if _gym is None:
            raise ImportError("HalataflEnv needs gymnasium: pip install gymnasium")
        if side not in SIDES:
            raise ValueError(f"unknown side {side!r}: expected 'foxes' or 'geese'")
        self.side = side
        self.variant = variant
        self.fen = fen
        self.illegal_action = _check_mode(illegal_action)
        self.render_mode = _check_render_mode(render_mode)
        # Built now so that a bad spec, variant or position fails here.
        self._game = _hf.Game(fen, variant)
        self._lost_by_illegal_action = False
        self._opponent = _hf.Agent(opponent, 0, variant)
        self.observation = _check_observation(observation)
        self.observation_space, self.action_space = _spaces(self.observation)

    def _play_opponent(self):
        while not self._game.is_over() and self._game.side != self.side:
            self._game.play_action(self._opponent.choose(self._game).action)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._game = _hf.Game(self.fen, self.variant)
        self._lost_by_illegal_action = False
        self._opponent.new_game(int(self.np_random.integers(2**63)))
        self._play_opponent()
        if self.render_mode == "human":
            self.render()
        return self._observe(), {}

    def _observe(self) -> dict:
        live = not self._game.is_over() and not self._lost_by_illegal_action
        return _observe(self._game, live, self.observation, ended_mask=1)

    def action_masks(self) -> np.ndarray:
        """The legal actions of the side to move as 1089 booleans
        (sb3-contrib's ``MaskablePPO`` calls this); all True once the
        episode has ended, as the observation's mask."""
        if self._game.is_over() or self._lost_by_illegal_action:
            return np.ones(_hf.ACTION_SIZE, dtype=bool)
        return self._game.action_mask()

    def step(self, action):
        action = _check_action(action)
        if self._game.is_over() or self._lost_by_illegal_action:
            raise ValueError("step() after the game ended: call reset()")
        if not self._game.action_mask()[action]:
            if self.illegal_action == "raise":
                self._game.action_to_move(action)  # raises, saying why
            self._lost_by_illegal_action = True
            return self._observe(), -1.0, True, False, {"illegal_action": True}
        self._game.play_action(action)
        self._play_opponent()
        outcome = self._game.outcome()
        info = {"outcome": str(outcome)} if outcome else {}
        reward = float(outcome.value_for(self.side)) if outcome else 0.0
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, outcome is not None, False, info

    @property
    def game(self) -> _hf.Game:
        """A copy of the game being played (with its history)."""
        return self._game.copy()

    def render(self):
        text = _render_text(self._game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass


try:
    from gymnasium.vector import AutoresetMode as _AutoresetMode
    from gymnasium.vector import VectorEnv as _VectorBase
except ImportError:  # pragma: no cover - gymnasium is optional
    _VectorBase = object
    _AutoresetMode = None


class HalataflVectorEnv(_VectorBase):
    """Thousands of games stepped at once as one Gymnasium vector environment
    (EnvPool's idea), over :class:`halatafl.BatchGames`: one call into Rust
    per step for every game, no Python loop over games.

    ``HalataflVectorEnv(num_envs, side="foxes", opponent="random",
    variant="two-foxes", fen=None, observation="planes", copy=True)``.

    - ``opponent="random"``: the policy plays ``side``; after each of its
      moves every game answers with a uniformly random legal move, in Rust,
      and rewards are ``side``'s result (+1, -1, 0 for a draw, 0 while the
      game goes on). ``opponent=None``: the policy plays both sides (self-play);
      the reward is for the side that just moved, and ``info["side"]`` says
      who is to move next in each game.
    - Autoreset is Gymnasium's same-step mode (``metadata["autoreset_mode"]``
      is ``AutoresetMode.SAME_STEP``): a game that ends is restarted within
      the step, and the row returned is the new game's first observation.
      So every observation has the side to move's legal actions in its mask,
      and no all-zero mask ever reaches the policy. Every end is a
      termination (the rules end every game; nothing is truncated), so no
      final observation is needed to bootstrap a value; ``info["winner"]``
      gives each ending game's winner (0 foxes, 1 geese, 2 draw, -1 still
      playing).
    - An illegal action raises ``ValueError`` naming the game, and no game
      moves. ``action_masks()`` returns the current masks as booleans
      (num_envs, 1089).
    - ``copy=False`` reuses the observation and mask arrays between steps
      (Gymnasium's ``copy`` convention): faster; use them before the next step.
    """

    metadata = {"autoreset_mode": _AutoresetMode.SAME_STEP if _AutoresetMode else None, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        side: str = "foxes",
        opponent: str | None = "random",
        variant: str = "two-foxes",
        fen: str | None = None,
        observation: str = "planes",
        copy: bool = True,
    ):
        if _VectorBase is object:
            raise ImportError("HalataflVectorEnv needs gymnasium: pip install gymnasium")
        from gymnasium.vector.utils import batch_space

        if side not in SIDES:
            raise ValueError(f"unknown side {side!r}: expected 'foxes' or 'geese'")
        self.observation = _check_observation(observation)
        self.side = side if opponent is not None else None
        self.opponent = opponent
        self.copy = bool(copy)
        self._batch = _hf.BatchGames(num_envs, variant, fen, 0, opponent, side if opponent is not None else None)
        self.num_envs = self._batch.num_games
        self.single_observation_space, self.single_action_space = _spaces(self.observation)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._mask = None

    def _obs(self, planes: np.ndarray, mask: np.ndarray) -> dict:
        self._mask = mask
        if self.observation == "flat":
            planes = planes.reshape(self.num_envs, -1)
        # bool and int8 are both one byte: the int8 mask is a view, not a copy.
        return {"observation": planes, "action_mask": mask.view(np.int8)}

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._np_random, seed = _gym.utils.seeding.np_random(seed)
        planes, mask = self._batch.reset(seed)
        return self._obs(planes, mask), {}

    def step(self, actions):
        planes, mask, rewards, dones, winners = self._batch.step(np.asarray(actions), copy=self.copy)
        info = {"winner": winners}
        if self.opponent is None:
            info["side"] = self._batch.sides()
        truncated = np.zeros(self.num_envs, dtype=bool)
        return self._obs(planes, mask), rewards, dones, truncated, info

    def action_masks(self) -> np.ndarray:
        """The current legal-action masks, (num_envs, 1089) booleans."""
        if self._mask is None:
            self._mask = self._batch.observe()[1]
        return self._mask

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal action per game (drawn in Rust)."""
        return self._batch.random_actions()


try:
    from pettingzoo import AECEnv as _AECBase
except ImportError:  # pragma: no cover - pettingzoo is optional
    _AECBase = object


class HalataflAECEnv(_AECBase):
    """Both sides as PettingZoo AEC agents, ``"foxes"`` and ``"geese"``.

    ``HalataflAECEnv(variant="two-foxes", fen=None, illegal_action="lose",
    render_mode=None)``. The agent to act is the side to move; its observation
    carries the action mask, the other agent's mask is all zeros.
    """

    metadata = {
        "render_modes": ["ansi", "human"],
        "name": "halatafl_v0",
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(
        self,
        variant: str = "two-foxes",
        fen: str | None = None,
        illegal_action: str = "lose",
        render_mode: str | None = None,
    ):
        if _AECBase is object:
            raise ImportError("HalataflAECEnv needs pettingzoo: pip install pettingzoo")
        super().__init__()
        self.variant = variant
        self.fen = fen
        self.illegal_action = _check_mode(illegal_action)
        self.render_mode = _check_render_mode(render_mode)
        self._game = _hf.Game(fen, variant)
        self.possible_agents = list(SIDES)
        observation, action = _spaces()
        self.observation_spaces = {a: observation for a in SIDES}
        self.action_spaces = {a: action for a in SIDES}
        # Separate space objects per agent, so seeding one leaves the other.
        self.observation_spaces["geese"], self.action_spaces["geese"] = _spaces()

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        self._game = _hf.Game(self.fen, self.variant)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self._game.side
        if seed is not None:
            for a in SIDES:
                self.action_spaces[a].seed(seed)
        if self._game.is_over():
            self._finish(self._game.outcome())

    def observe(self, agent):
        over = self._game.is_over() or any(self.terminations.values())
        return _observe(self._game, agent == self._game.side and not over)

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = _check_action(action)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if not self._game.action_mask()[action]:
            if self.illegal_action == "raise":
                self._game.action_to_move(action)  # raises with the reason
            self.rewards[agent] = -1.0
            self.infos[agent] = {"illegal_action": True}
            self.terminations = {a: True for a in self.agents}
        else:
            self._game.play_action(action)
            outcome = self._game.outcome()
            if outcome:
                self._finish(outcome)
            else:
                self.agent_selection = self._game.side
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish(self, outcome):
        for a in self.agents:
            self.rewards[a] = float(outcome.value_for(a))
            self.terminations[a] = True
            self.infos[a] = {"outcome": str(outcome)}

    def render(self):
        text = _render_text(self._game)
        if self.render_mode == "human":
            print(text)
            return None
        if self.render_mode is None:
            if _gym is not None:
                _gym.logger.warn("render() called without a render_mode")
            return None
        return text

    def close(self):
        pass


def env(**kwargs) -> HalataflAECEnv:
    """The PettingZoo AEC environment (PettingZoo's ``env()`` convention)."""
    return HalataflAECEnv(**kwargs)


if _gym is not None and "halatafl/Halatafl-v0" not in _gym.registry:
    _gym.register(
        id="halatafl/Halatafl-v0",
        entry_point="halatafl.envs:HalataflEnv",
        vector_entry_point="halatafl.envs:HalataflVectorEnv",
    )
