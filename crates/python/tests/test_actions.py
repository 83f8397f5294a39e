"""The fixed action space: from slot x final slot, its tie rule, and
conversions between actions and move strings."""

import numpy as np
import pytest

import halatafl

# A fox on c3 can take the four geese around the c3-e5 square either way
# round: two chains with the same start and end and the same captures.
LOOP = ".../.../F..G.../..G.G../..FG.../GGG/GGG f 0"


def test_slots_and_points():
    names = halatafl.point_names()
    assert len(names) == 33 and names[0] == "c1" and names[-1] == "e7"
    assert halatafl.ACTION_SIZE == 33 * 33
    assert halatafl.action_points(0) == ("c1", "c1")
    action = halatafl.move_to_action("c7-d6")
    assert action == names.index("c7") * 33 + names.index("d6")
    assert halatafl.action_points(action) == ("c7", "d6")
    assert halatafl.move_to_action("c5xe5xe3") == names.index("c5") * 33 + names.index("e3")


def random_games(variant, games, seed):
    rng = np.random.default_rng(seed)
    for _ in range(games):
        game = halatafl.Game(variant=variant)
        while not game.is_over():
            yield game
            moves = game.legal_moves()
            game.play(moves[rng.integers(len(moves))])


@pytest.mark.parametrize("variant", ["two-foxes", "two-foxes corner-links", "classic geese=15 sideways"])
def test_every_legal_move_has_its_action_and_back(variant):
    positions = 0
    for game in random_games(variant, 15, seed=1):
        positions += 1
        moves = game.legal_moves()
        actions = game.legal_actions()
        mask = game.action_mask()
        assert mask.dtype == bool and mask.shape == (halatafl.ACTION_SIZE,)
        assert sorted(np.flatnonzero(mask)) == actions
        assert sorted({halatafl.move_to_action(m) for m in moves}) == actions
        for move in moves:
            named = game.action_to_move(halatafl.move_to_action(move))
            # The action names this move unless a chain ties with it.
            if named != move:
                assert named.count("x") >= move.count("x") and named[:2] == move[:2]
                assert named.split("x")[-1] == move.split("x")[-1]
    assert positions > 500


def test_tie_rule_names_the_first_chain_in_move_order():
    game = halatafl.Game(LOOP)
    assert sorted(game.legal_moves()) == ["c3xc5xe5xe3xc3", "c3xe3xe5xc5xc3"]
    action = halatafl.move_to_action("c3xe3xe5xc5xc3")
    assert game.legal_actions() == [action]
    assert game.action_to_move(action) == "c3xc5xe5xe3xc3"
    assert game.play_action(action) == "c3xc5xe5xe3xc3"
    assert game.fen().startswith(".../.../F....../......./..F..../GGG/GGG")


def test_bad_actions_raise_value_errors():
    game = halatafl.Game()
    with pytest.raises(ValueError, match="action 5000 is out of range: actions are 0 to 1088"):
        game.play_action(5000)
    with pytest.raises(ValueError, match="action -1 is out of range"):
        game.action_to_move(-1)
    with pytest.raises(ValueError, match=r"action 0 \(c1 to c1\) is not legal in `F.F/"):
        game.play_action(0)
    with pytest.raises(ValueError, match="out of range"):
        halatafl.action_points(1089)
    with pytest.raises(ValueError, match="malformed move `zz` at character 1"):
        halatafl.move_to_action("zz")
    assert game.ply == 0
