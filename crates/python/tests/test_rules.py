"""The rules through the single-game API: positions, moves, outcomes,
variants, and errors worded as the CLI words them."""

import pytest

import halatafl
from conftest import cli_error


def perft(game: halatafl.Game, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in game.legal_moves():
        game.play(move)
        total += perft(game, depth - 1)
        game.undo()
    return total


def test_start_position_and_perft_match_the_rules_contract():
    game = halatafl.Game()
    assert game.fen() == halatafl.START_FEN
    assert game.side == "foxes" and game.ply == 0 and game.quiet == 0
    assert sorted(game.legal_moves()) == ["c7-c6", "c7-d6", "c7-d7", "e7-d6", "e7-d7", "e7-e6"]
    # docs/rules.md's perft table, default board and corner-links.
    assert perft(halatafl.Game(), 3) == 778
    assert perft(halatafl.Game(variant="two-foxes corner-links"), 3) == 792


def test_play_undo_and_position_strings_round_trip():
    game = halatafl.Game()
    game.play("c7-c6")
    assert game.fen() == "..F/F../......./GGGGGGG/GGGGGGG/GGG/GGG g 1"
    assert game.moves() == ["c7-c6"] and game.side == "geese"
    again = halatafl.Game(game.fen())
    assert again.fen() == game.fen() and again.ply == 0
    assert game.undo() == "c7-c6" and game.fen() == halatafl.START_FEN
    assert game.undo() is None


def test_classic_variants_and_options():
    for geese in (13, 15, 17):
        game = halatafl.Game(variant=f"classic geese={geese} sideways")
        placement = game.fen().split()[0]
        assert placement.count("F") == 1 and placement.count("G") == geese
        assert game.variant == f"classic geese={geese} sideways"
    plain = halatafl.Game(variant="classic")
    assert plain.variant == "classic geese=13"
    assert halatafl.Game(variant="two-foxes corner-links").variant == "two-foxes corner-links"


def test_outcomes_with_reasons():
    pen_full = halatafl.Game("GGG/GGG/F.GGG.F/......./......./.../... f 0")
    assert pen_full.is_over() and pen_full.legal_moves() == [] and pen_full.legal_actions() == []
    outcome = pen_full.outcome()
    assert (outcome.winner, outcome.reason, outcome.result) == ("geese", "pen-filled", "geese")
    assert outcome.value_for("geese") == 1 and outcome.value_for("foxes") == -1
    assert str(outcome) == "geese (pen-filled)"

    few = halatafl.Game("F.F/.../......./GGGGGGG/G....../.../... g 0")
    assert (few.outcome().winner, few.outcome().reason) == ("foxes", "fewer-than-nine")

    fifty = halatafl.Game("F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 99")
    assert fifty.outcome() is None
    fifty.play("c7-c6")
    assert (fifty.outcome().winner, fifty.outcome().reason) == (None, "fifty-moves")
    assert fifty.outcome().result == "draw"

    # A goose steps sideways and back while a fox shuffles: the start
    # position stands for the third time after eight plies.
    loop = halatafl.Game("F.F/.../G....../GGGGGGG/GGGGGGG/.../... f 0")
    for move in ["c7-c6", "a5-b5", "c6-c7", "b5-a5"] * 2:
        assert loop.outcome() is None
        loop.play(move)
    assert loop.repetitions() == 3
    assert (loop.outcome().winner, loop.outcome().reason) == (None, "threefold")
    with pytest.raises(ValueError, match="played after the game ended: draw \\(threefold\\)"):
        loop.play("c7-c6")


def test_bad_positions_moves_and_variants_raise_the_cli_messages():
    with pytest.raises(ValueError) as bad_fen:
        halatafl.Game("xx")
    assert str(bad_fen.value) == 'bad position "xx": ' + cli_error("moves", "--fen", "xx").split(": ", 1)[1]

    game = halatafl.Game()
    with pytest.raises(ValueError) as illegal:
        game.play("c7-c5")
    assert str(illegal.value) in cli_error("replay", "c7-c5")
    assert str(illegal.value) == "ply 1: illegal move `c7-c5`: legal moves from c7: c7-c6 c7-d6 c7-d7"
    with pytest.raises(ValueError, match="malformed move `c7-c8` at character 4"):
        game.play("c7-c8")
    assert game.ply == 0, "a refused move changes nothing"

    with pytest.raises(ValueError) as geese:
        halatafl.Game(variant="classic geese=14")
    assert str(geese.value) == cli_error("moves", "--variant", "classic", "--geese", "14")
    with pytest.raises(ValueError, match="unknown variant `chess`"):
        halatafl.Game(variant="chess")
    with pytest.raises(ValueError, match="unknown option `sideways` for two-foxes"):
        halatafl.Game(variant="two-foxes sideways")
    with pytest.raises(ValueError, match="3 foxes on the board"):
        halatafl.Game("FFF/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 0")


def test_observation_is_the_networks_encoding():
    assert halatafl.ENCODING_VERSION == 1
    assert tuple(halatafl.OBS_SHAPE) == (10, 7, 7)
    game = halatafl.Game()
    obs = game.observation()
    assert obs.dtype.name == "float32" and obs.shape == (10, 7, 7)
    # Plane 0 foxes at c7 and e7 (row 7 is grid row 6), plane 1 twenty geese,
    # plane 2 the 33 points, plane 3 zero (foxes to move), plane 4 the pen.
    assert obs[0].sum() == 2 and obs[0, 6, 2] == 1 and obs[0, 6, 4] == 1
    assert obs[1].sum() == 20 and obs[2].sum() == 33 and obs[3].sum() == 0
    assert obs[4].sum() == 9 and obs[4, 4:7, 2:5].sum() == 9
    game.play("c7-c6")
    obs = game.observation()
    assert obs[3].sum() == 49 and obs[5, 0, 0] == pytest.approx(0.01)
    assert halatafl.Game(variant="classic geese=15 sideways").observation()[[7, 9]].sum() == 98
    assert halatafl.Game(variant="classic").observation()[4].sum() == 0


def test_observation_marks_a_repeated_position():
    game = halatafl.Game()
    for move in ["c7-c6", "a4-a5", "c6-c7", "a5-b5", "c7-c6"]:
        game.play(move)
        assert game.observation()[6].sum() == 0
    game = halatafl.Game("F.F/.../G....../GGGGGGG/GGGGGGG/.../... f 0")
    for move in ["c7-c6", "a5-b5", "c6-c7", "b5-a5"]:
        game.play(move)
    assert game.repetitions() == 2 and game.observation()[6].sum() == 49


def test_mirror_of_positions_observations_and_actions():
    game = halatafl.Game()
    for move in ["c7-c6", "a3-a5"][:1]:
        game.play(move)
    mirrored = game.mirror()
    assert mirrored.fen() == "F../..F/......./GGGGGGG/GGGGGGG/GGG/GGG g 1"
    assert (halatafl.mirror_observation(game.observation()) == mirrored.observation()).all()
    stacked = halatafl.mirror_observation(game.observation()[None])
    assert stacked.shape == (1, 10, 7, 7) and (stacked[0] == mirrored.observation()).all()
    assert sorted(halatafl.mirror_action(a) for a in game.legal_actions()) == mirrored.legal_actions()
    for a in range(halatafl.ACTION_SIZE):
        assert halatafl.mirror_action(halatafl.mirror_action(a)) == a
    with pytest.raises(ValueError, match="last two axes must be the 7x7 grid"):
        halatafl.mirror_observation(game.observation()[:, :6])
