"""Many games at once: arrays out, autoreset, and agreement with the
single-game API."""

import numpy as np
import pytest

import halatafl


def test_arrays_have_the_documented_shapes_and_types():
    batch = halatafl.BatchGames(5, seed=1)
    obs, mask = batch.reset()
    assert obs.shape == (5, 10, 7, 7) and obs.dtype == np.float32
    assert mask.shape == (5, 1089) and mask.dtype == bool
    assert (mask.sum(axis=1) == 6).all()
    assert (obs == halatafl.Game().observation()).all()
    actions = batch.random_actions()
    assert actions.dtype == np.int64 and actions.shape == (5,)
    obs, mask, rewards, dones, winners = batch.step(actions)
    assert rewards.dtype == np.float32 and dones.dtype == bool and winners.dtype == np.int8
    assert (batch.sides() == 1).all() and batch.plies_played == 5


@pytest.mark.parametrize("copy", [True, False])
def test_batched_games_follow_the_single_game_api_and_restart(copy):
    """Random games played in a batch and, move for move, in single games:
    the same positions, masks, observations, rewards and outcomes."""
    n = 4
    batch = halatafl.BatchGames(n, variant="two-foxes corner-links", seed=7)
    singles = [halatafl.Game(variant="two-foxes corner-links") for _ in range(n)]
    obs, mask = batch.reset()
    ended = 0
    for _ in range(600):
        for i, game in enumerate(singles):
            assert batch.fens()[i] == game.fen()
            assert (obs[i] == game.observation()).all()
            assert (mask[i] == game.action_mask()).all()
        actions = batch.random_actions()
        movers = [g.side for g in singles]
        for game, action in zip(singles, actions):
            game.play_action(int(action))
        obs, mask, rewards, dones, winners = batch.step(actions, copy=copy)
        for i, game in enumerate(singles):
            outcome = game.outcome()
            assert dones[i] == (outcome is not None)
            if outcome is None:
                assert rewards[i] == 0 and winners[i] == -1
            else:
                ended += 1
                assert rewards[i] == outcome.value_for(movers[i])
                assert winners[i] == {"foxes": 0, "geese": 1, None: 2}[outcome.winner]
                singles[i] = halatafl.Game(variant="two-foxes corner-links")
    assert ended >= 10 and batch.games_finished == ended


def test_copy_false_overwrites_the_same_two_arrays():
    batch = halatafl.BatchGames(3, seed=4)
    obs, mask, *_ = batch.step(batch.random_actions(), copy=False)
    first = obs.copy()
    obs2, mask2, *_ = batch.step(batch.random_actions(), copy=False)
    assert obs2 is obs and mask2 is mask
    assert (obs != first).any(), "the second step wrote into the same array"
    fresh, fresh_mask, *_ = batch.step(batch.random_actions())
    assert fresh is not obs and fresh_mask is not mask
    for i in range(3):
        assert (fresh[i] == batch.game(i).observation()).all()
    obs.flags.writeable = False
    with pytest.raises(ValueError):
        batch.step(batch.random_actions(), copy=False)


def test_step_takes_int32_arrays_and_lists():
    batch = halatafl.BatchGames(2)
    batch.step(batch.random_actions().astype(np.int32))
    batch.step([int(a) for a in batch.random_actions()])
    assert batch.plies_played == 4


def test_a_bad_action_names_the_game_and_changes_nothing():
    batch = halatafl.BatchGames(3, seed=2)
    before = batch.fens()
    actions = batch.random_actions()
    actions[1] = 0
    with pytest.raises(ValueError, match=r"game 1: action 0 \(c1 to c1\) is not legal"):
        batch.step(actions)
    actions[1] = 1089
    with pytest.raises(ValueError, match="game 1: action 1089 is out of range"):
        batch.step(actions)
    with pytest.raises(ValueError, match="2 actions for 3 games"):
        batch.step(actions[:2])
    with pytest.raises(ValueError, match="actions must be a 1-D array"):
        batch.step("abc")
    assert batch.fens() == before and batch.plies_played == 0


def test_construction_checks_its_arguments():
    with pytest.raises(ValueError, match="num_games = 0"):
        halatafl.BatchGames(0)
    with pytest.raises(ValueError, match="is already over: geese \\(pen-filled\\)"):
        halatafl.BatchGames(2, fen="GGG/GGG/F.GGG.F/......./......./.../... f 0")
    with pytest.raises(ValueError, match='bad position "x"'):
        halatafl.BatchGames(2, fen="x")
    with pytest.raises(ValueError, match="game 9 does not exist"):
        halatafl.BatchGames(2).game(9)
    with pytest.raises(ValueError, match="game -1 does not exist"):
        halatafl.BatchGames(2).game(-1)
    with pytest.raises(ValueError, match="num_games = -5"):
        halatafl.BatchGames(-5)
    with pytest.raises(ValueError, match="seed = -2: must be 0 or more"):
        halatafl.BatchGames(2, seed=-2)
    with pytest.raises(ValueError, match="seed = -2: must be 0 or more"):
        halatafl.BatchGames(2).reset(seed=-2)


def test_seeds_make_random_actions_reproducible():
    def run(seed):
        batch = halatafl.BatchGames(8, seed=seed)
        out = []
        for _ in range(50):
            actions = batch.random_actions()
            out.append(actions)
            batch.step(actions)
        return np.concatenate(out)

    assert (run(3) == run(3)).all()
    assert (run(3) != run(4)).any()


def test_a_batch_game_can_be_handed_to_an_agent():
    batch = halatafl.BatchGames(2, seed=1)
    batch.step(batch.random_actions())
    game = batch.game(1)
    decision = halatafl.Agent("alphabeta:depth=2").choose(game)
    actions = batch.random_actions()
    actions[1] = decision.action
    batch.step(actions)
    assert batch.game(1).moves()[-1] == decision.move


def test_the_batch_size_is_bounded_by_memory():
    # 2^20 games, the former cap, needed about 24 GB with a step's arrays.
    why = r"\(each game takes about 24 kB with its rows of the step arrays, 65536 games about 1.5 GB; "
    with pytest.raises(ValueError, match=f"^num_games = 65537: must be from 1 to 65536 {why}"):
        halatafl.BatchGames(2**16 + 1)
    with pytest.raises(ValueError, match="^num_games = 1048576: must be from 1 to 65536 "):
        halatafl.BatchGames(2**20)
