"""The Gymnasium and PettingZoo environments pass their libraries' checks."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import halatafl
from halatafl.envs import HalataflAECEnv, HalataflEnv


# api_test warns about what PettingZoo's own action-masked classic games do
# too: dict observations ({"observation", "action_mask"}) and agent names
# that are not `name_N`.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:We recommend agents to be named")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("variant", ["two-foxes", "classic geese=13 sideways"])
def test_pettingzoo_api_test(variant):
    api_test(HalataflAECEnv(variant=variant), num_cycles=300)


@pytest.mark.parametrize("side", ["foxes", "geese"])
def test_gymnasium_check_env(side):
    check_env(HalataflEnv(side=side, opponent="alphabeta:depth=1"), skip_render_check=True)
    check_env(gymnasium.make("halatafl/Halatafl-v0", side=side, render_mode="ansi").unwrapped)


def test_gym_episode_against_an_opponent_ends_with_the_result():
    env = HalataflEnv(side="geese", opponent="random")
    obs, info = env.reset(seed=1)
    assert env.game.side == "geese" and env.game.ply == 1, "the foxes' opponent moved first"
    assert obs["action_mask"].dtype == np.int8 and obs["observation"].shape == (10, 7, 7)
    rng = np.random.default_rng(0)
    terminated, steps = False, 0
    while not terminated:
        legal = np.flatnonzero(obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        assert not truncated
        steps += 1
    outcome = env.game.outcome()
    assert reward == outcome.value_for("geese") and info["outcome"] == str(outcome)
    # The ending observation allows any action (a masked sampler in an
    # autoresetting vector env draws once from it; the next step resets).
    assert obs["action_mask"].all() and env.action_masks().all()
    with pytest.raises(ValueError, match="after the game ended"):
        env.step(0)


def test_illegal_actions_lose_or_raise():
    env = HalataflEnv()
    env.reset(seed=0)
    _obs, reward, terminated, _trunc, info = env.step(0)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)
    strict = HalataflEnv(illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 0 \(c1 to c1\) is not legal"):
        strict.step(0)
    with pytest.raises(ValueError, match="out of range"):
        strict.step(1089)
    with pytest.raises(ValueError, match="is not an integer"):
        strict.step(1.5)
    aec = HalataflAECEnv()
    aec.reset()
    aec.step(0)
    assert aec.rewards == {"foxes": -1.0, "geese": 0.0} and all(aec.terminations.values())
    with pytest.raises(ValueError, match="illegal_action='maybe'"):
        HalataflAECEnv(illegal_action="maybe")


def test_bad_env_arguments_raise_value_errors():
    with pytest.raises(ValueError, match="bad agent spec `nope`"):
        HalataflEnv(opponent="nope")
    with pytest.raises(ValueError, match="unknown side 'ducks'"):
        HalataflEnv(side="ducks")
    with pytest.raises(ValueError, match="unknown variant"):
        HalataflAECEnv(variant="chess")


def test_aec_rewards_follow_the_outcome():
    env = HalataflAECEnv()
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        assert agent == env.unwrapped._game.side
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    outcome = env._game.outcome()
    assert outcome is not None
