"""What RL users need beyond the environments' own checks: games that pickle
and undo by action, a sure maximum game length, SB3's checker without
warnings, the vector environment's autoreset, masks and speed path, the
OpenSpiel games under OpenSpiel's own tests, and the two training examples
learning something at a tiny budget on a fixed seed."""

from __future__ import annotations

import copy
import importlib.util
import pickle
import random
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import halatafl
from halatafl.envs import HalataflEnv, HalataflVectorEnv

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_game(seed: int, variant: str = "two-foxes") -> halatafl.Game:
    rng = random.Random(seed)
    game = halatafl.Game(None, variant)
    while not game.is_over():
        game.play_action(rng.choice(game.legal_actions()))
    return game


# --- the Game's small gaps -------------------------------------------------


def test_games_pickle_and_copy_with_their_history():
    game = halatafl.Game()
    # A fox and a goose shuffle back and forth: a position stands twice.
    for mv in ["e7-e6", "c4-b5", "e6-e7", "b5-c5", "e7-e6", "c5-b5", "e6-e7"]:
        game.play(mv)
    assert game.repetitions() == 2
    for other in (pickle.loads(pickle.dumps(game)), copy.copy(game), copy.deepcopy(game)):
        assert other.moves() == game.moves() and other.fen() == game.fen()
        assert other.repetitions() == game.repetitions()
        assert other.start_fen() == game.start_fen()
    classic = halatafl.Game(".../.../......./...F.../GGGGGGG/GGG/GGG f 0", "classic geese=13 sideways")
    classic.play_action(classic.legal_actions()[0])
    back = pickle.loads(pickle.dumps(classic))
    assert back.variant == classic.variant and back.fen() == classic.fen()


def test_undo_action_gives_back_what_play_action_took():
    game = random_game(3)
    played = []
    replay = halatafl.Game()
    for mv in game.moves():
        played.append(halatafl.move_to_action(mv))
        replay.play(mv)
    for action in reversed(played):
        assert replay.undo_action() == action
    assert replay.undo_action() is None and replay.ply == 0


def test_player_numbers_follow_the_side_to_move():
    game = halatafl.Game()
    assert (game.player, game.side) == (0, "foxes")
    game.play("e7-e6")
    assert (game.player, game.side) == (1, "geese")


def test_max_game_length_bounds_every_game():
    assert halatafl.MAX_GAME_LENGTH == halatafl.Game().max_remaining_plies() == 9500
    for seed in range(20):
        for variant in ("two-foxes", "classic geese=17 sideways"):
            game = random_game(seed, variant)
            moves = game.moves()
            replay = halatafl.Game(None, variant)
            bound = replay.max_remaining_plies()
            for i, mv in enumerate(moves):
                # From every position the bound covers the rest of the game.
                assert replay.max_remaining_plies() >= len(moves) - i
                replay.play(mv)
            assert len(moves) <= bound
            assert replay.max_remaining_plies() == 0


# --- Stable-Baselines3 and the single environment ---------------------------


def test_sb3_checker_accepts_the_flat_observation_without_warnings():
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(HalataflEnv(observation="flat"))
        check_env(HalataflEnv(side="geese", observation="flat"))


def test_action_masks_match_the_observation():
    env = HalataflEnv(side="geese", opponent="alphabeta:depth=1", observation="flat")
    obs, _ = env.reset(seed=4)
    assert obs["observation"].shape == (490,)
    rng = np.random.default_rng(1)
    done = False
    while not done:
        mask = env.action_masks()
        assert mask.dtype == bool
        np.testing.assert_array_equal(mask, obs["action_mask"].astype(bool))
        obs, _r, done, _t, _i = env.step(int(rng.choice(np.flatnonzero(mask))))
    with pytest.raises(ValueError, match="observation='cube'"):
        HalataflEnv(observation="cube")


# --- the vector environment ---------------------------------------------


def test_vector_env_autoresets_in_the_same_step_and_never_shows_an_empty_mask():
    env = gymnasium.make_vec("halatafl/Halatafl-v0", num_envs=32, vectorization_mode="vector_entry_point", side="geese")
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert env.single_action_space == gymnasium.spaces.Discrete(1089)
    obs, _ = env.reset(seed=7)
    assert obs["observation"].shape == (32, 10, 7, 7) and obs["action_mask"].shape == (32, 1089)
    assert env.observation_space.contains(obs)
    ended = 0
    for _ in range(400):
        obs, rewards, terminated, truncated, info = env.step(env.random_actions())
        assert obs["action_mask"].any(axis=1).all(), "every row has legal actions"
        np.testing.assert_array_equal(env.action_masks(), obs["action_mask"].astype(bool))
        assert not truncated.any()
        assert (rewards[~terminated] == 0).all()
        # The geese's result: +1 when the geese won, -1 when the foxes did.
        winners = info["winner"][terminated]
        expected = np.select([winners == 1, winners == 0], [1.0, -1.0], 0.0)
        np.testing.assert_array_equal(rewards[terminated], expected)
        ended += int(terminated.sum())
    assert ended > 0


def test_vector_env_is_reproducible_and_refuses_illegal_actions():
    def trajectory(seed):
        env = HalataflVectorEnv(8, side="foxes")
        env.reset(seed=seed)
        out = []
        for _ in range(50):
            obs, r, d, _t, _i = env.step(env.random_actions())
            out.append((obs["observation"].sum(), r.sum(), d.sum()))
        return out

    assert trajectory(5) == trajectory(5)
    env = HalataflVectorEnv(4)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="game 0"):
        env.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="unknown opponent"):
        halatafl.BatchGames(4, opponent="alphabeta")
    with pytest.raises(ValueError, match="side= needs opponent"):
        halatafl.BatchGames(4, side="geese")


def test_vector_env_self_play_reports_the_side_to_move():
    env = HalataflVectorEnv(16, opponent=None)
    env.reset(seed=1)
    obs, rewards, done, _t, info = env.step(env.random_actions())
    assert (info["side"][~done] == 1).all(), "after the foxes' first move the geese are to move"


# --- OpenSpiel -------------------------------------------------------------


@pytest.fixture(scope="module")
def pyspiel():
    pyspiel = pytest.importorskip("pyspiel")
    import halatafl.openspiel  # noqa: F401 (registers the games)

    return pyspiel


@pytest.mark.parametrize("name", ["halatafl", "fox_and_geese", "fox_and_geese(geese=17,sideways=True)"])
def test_openspiel_random_sim_test(pyspiel, name):
    game = pyspiel.load_game(name)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_openspiel_states_serialize_clone_and_observe(pyspiel):
    game = pyspiel.load_game("halatafl")
    assert game.max_game_length() == halatafl.MAX_GAME_LENGTH
    assert game.num_distinct_actions() == halatafl.ACTION_SIZE
    state = game.new_initial_state()
    rng = random.Random(0)
    reference = halatafl.Game()
    for _ in range(30):
        assert state.current_player() == reference.player
        action = rng.choice(state.legal_actions())
        assert state.legal_actions() == reference.legal_actions()
        state.apply_action(action)
        reference.play_action(action)
    np.testing.assert_array_equal(np.array(state.observation_tensor(0)), reference.observation().reshape(-1))
    assert state.observation_string(1) == reference.fen()
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(state2) == str(state) and state2.history() == state.history()
    assert str(pickle.loads(pickle.dumps(state))) == str(state)
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[0])
    assert str(clone) != str(state) and len(state.history()) == 30
    with pytest.raises(pyspiel.SpielError, match="clone"):
        state.undo_action(state.current_player(), state.history()[-1])


def test_openspiel_returns_follow_the_outcome(pyspiel):
    game = pyspiel.load_game("fox_and_geese")
    state = game.new_initial_state()
    rng = random.Random(2)
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    assert state.current_player() == pyspiel.PlayerId.TERMINAL
    outcome = state.game_.outcome()
    assert state.returns() == [outcome.value_for("foxes"), outcome.value_for("geese")]


def test_openspiel_mcts_plays_the_projects_agents(pyspiel):
    from open_spiel.python.algorithms import evaluate_bots, mcts

    from halatafl.openspiel import HalataflBot

    game = pyspiel.load_game("fox_and_geese")
    rng = np.random.RandomState(0)
    mcts_bot = mcts.MCTSBot(game, 1.4, 8, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    alphabeta = HalataflBot(game, "alphabeta:depth=2")
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), [alphabeta, mcts_bot], rng)
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


# --- the training examples --------------------------------------------------


def test_maskable_ppo_example_learns_against_random():
    example = load_example("maskable_ppo")
    result = example.train(12288, side="geese", opponent="random", seed=0, eval_games=20)
    assert result["after"] > result["before"] + 0.2, result


def test_ppo_vector_example_learns_against_random():
    example = load_example("ppo_vector")
    result = example.train(iterations=10, num_envs=64, steps=64, side="geese", seed=0, eval_games=64)
    assert result["after"] > result["before"] + 0.3, result
