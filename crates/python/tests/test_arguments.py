"""Integer arguments everywhere (actions, seeds, counts, indices, budgets):
any size out of range is a ValueError naming the argument, never pyo3's
OverflowError; a bool (Python's or NumPy's) is a TypeError, never read as
0 or 1; NumPy integers are integers."""

import numpy as np
import pytest

import halatafl

HUGE = [2**63, 2**64, -(2**63) - 1, 10**40]
BOOLS = [True, False, np.True_, np.bool_(False)]


@pytest.mark.parametrize("value", HUGE)
def test_huge_actions_are_out_of_range(value):
    game = halatafl.Game()
    message = f"action {value} is out of range: actions are 0 to 1088"
    for call in (game.play_action, game.action_to_move, halatafl.action_points, halatafl.mirror_action):
        with pytest.raises(ValueError) as error:
            call(value)
        assert str(error.value) == message, call
    assert game.ply == 0


def test_an_integer_of_millions_of_digits_is_named_by_its_size():
    with pytest.raises(ValueError, match=r"^action \(an integer of 3321929 bits\) is out of range"):
        halatafl.Game().play_action(10**1_000_000)
    with pytest.raises(ValueError, match=r"^seed = -\(an integer of 3321929 bits\): must be 0 or more$"):
        halatafl.BatchGames(1, seed=-(10**1_000_000))


@pytest.mark.parametrize("value", BOOLS)
def test_bools_are_not_actions(value):
    game = halatafl.Game()
    name = "True" if value else "False"
    for call in (game.play_action, game.action_to_move, halatafl.action_points, halatafl.mirror_action):
        with pytest.raises(TypeError, match=f"^action = {name}: must be an integer, not a bool$"):
            call(value)
    assert game.ply == 0 and game.moves() == []


def test_numpy_integers_and_other_types():
    game = halatafl.Game()
    action = game.legal_actions()[0]
    assert game.action_to_move(np.int64(action)) == game.action_to_move(action)
    assert game.action_to_move(np.uint64(action)) == game.action_to_move(np.int32(action))
    assert halatafl.mirror_action(np.uint64(5)) == halatafl.mirror_action(5)
    with pytest.raises(ValueError, match="action 18446744073709551615 is out of range"):
        game.play_action(np.uint64(2**64 - 1))
    with pytest.raises(TypeError, match="^action must be an integer, not float$"):
        game.play_action(1.0)
    with pytest.raises(TypeError, match="^action must be an integer, not str$"):
        halatafl.action_points("3")


def test_seeds_take_every_u64_and_refuse_the_rest():
    top = 2**64 - 1
    assert halatafl.Agent("random", seed=top).choose(halatafl.Game()).move
    halatafl.Agent("random").new_game(top)
    halatafl.BatchGames(2, seed=top).reset(seed=top)
    halatafl.rust_random_playouts(10, seed=top)
    too_big = f"seed = {2**64}: must be at most {top} (2^64 - 1)"
    calls = [
        lambda s: halatafl.Agent("random", seed=s),
        lambda s: halatafl.Agent("random").new_game(s),
        lambda s: halatafl.BatchGames(2, seed=s),
        lambda s: halatafl.BatchGames(2).reset(seed=s),
        lambda s: halatafl.rust_random_playouts(10, seed=s),
    ]
    for call in calls:
        with pytest.raises(ValueError) as error:
            call(2**64)
        assert str(error.value) == too_big
        with pytest.raises(ValueError, match=f"^seed = {-(2**64)}: must be 0 or more$"):
            call(-(2**64))
        with pytest.raises(TypeError, match="^seed = True: must be an integer, not a bool$"):
            call(True)


def test_counts_and_indices():
    with pytest.raises(ValueError, match=f"^num_games = {2**64}: must be from 1 to "):
        halatafl.BatchGames(2**64)
    with pytest.raises(TypeError, match="^num_games = True: must be an integer, not a bool$"):
        halatafl.BatchGames(True)
    batch = halatafl.BatchGames(2)
    with pytest.raises(ValueError, match=f"^game {2**64} does not exist: there are 2 games$"):
        batch.game(2**64)
    with pytest.raises(TypeError, match="^index = False: must be an integer, not a bool$"):
        batch.game(False)
    assert batch.game(np.int8(1)).fen() == halatafl.Game().fen()
    with pytest.raises(ValueError, match=f"^plies = {2**64}: must be at most"):
        halatafl.rust_random_playouts(2**64)


def test_batch_actions_of_any_size_or_bools():
    batch = halatafl.BatchGames(3, seed=2)
    before = batch.fens()
    legal = [int(a) for a in batch.random_actions()]
    with pytest.raises(ValueError, match=f"^game 1: action {2**64} is out of range: actions are 0 to 1088$"):
        batch.step([legal[0], 2**64, legal[2]])
    with pytest.raises(ValueError, match=f"^game 2: action {-(2**63) - 1} is out of range"):
        batch.step([legal[0], legal[1], -(2**63) - 1])
    with pytest.raises(TypeError, match="^actions\\[1\\] = True: must be an integer, not a bool$"):
        batch.step([legal[0], True, legal[2]])
    with pytest.raises(TypeError, match="^actions must be integers, not a bool array$"):
        batch.step(np.ones(3, dtype=bool))
    with pytest.raises(TypeError, match="^actions\\[0\\] = True: must be an integer, not a bool$"):
        batch.step([np.True_, legal[1], legal[2]])
    assert batch.fens() == before and batch.plies_played == 0
    # Other integer dtypes are integers.
    batch.step(np.array(legal, dtype=np.uint16))
    assert batch.plies_played == 3


def test_signatures_show_the_default_seeds():
    import inspect

    for f in (halatafl.Agent, halatafl.BatchGames, halatafl.rust_random_playouts):
        assert inspect.signature(f).parameters["seed"].default == 0, f
