"""OpenSpiel's MCTSBot (random rollouts) against the project's agents, in
OpenSpiel's own game loop (`evaluate_bots`), game pairs with sides swapped.

    python crates/python/examples/openspiel_mcts.py --game fox_and_geese --pairs 10 \
        --simulations 200 --opponents random alphabeta:depth=2

Needs `pip install halatafl open_spiel`. Prints one markdown table row per
opponent: MCTSBot's score over the games (1 a win, 1/2 a draw), as the foxes
and as the geese, and the mean plies per game.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def play(game_name: str, pairs: int, simulations: int, rollouts: int, opponent: str, seed: int) -> dict:
    import pyspiel
    from open_spiel.python.algorithms import evaluate_bots, mcts

    import halatafl.openspiel  # noqa: F401 (registers the games)
    from halatafl.openspiel import HalataflBot

    game = pyspiel.load_game(game_name)
    rng = np.random.RandomState(seed)
    points = {0: [], 1: []}
    plies = []
    start = time.perf_counter()
    for pair in range(pairs):
        for mcts_player in (0, 1):
            bot = mcts.MCTSBot(game, 2.0, simulations, mcts.RandomRolloutEvaluator(rollouts, rng), random_state=rng)
            other = HalataflBot(game, opponent, seed=seed * 1000 + pair)
            bots = [bot, other] if mcts_player == 0 else [other, bot]
            state = game.new_initial_state()
            returns = evaluate_bots.evaluate_bots(state, bots, rng)
            points[mcts_player].append((returns[mcts_player] + 1) / 2)
            plies.append(len(state.history()))
    both = points[0] + points[1]
    return {
        "opponent": opponent,
        "games": len(both),
        "score": float(np.mean(both)),
        "as_foxes": float(np.mean(points[0])),
        "as_geese": float(np.mean(points[1])),
        "plies": float(np.mean(plies)),
        "seconds": time.perf_counter() - start,
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="fox_and_geese", help="an OpenSpiel game string, e.g. halatafl or fox_and_geese(geese=15)")
    p.add_argument("--pairs", type=int, default=10)
    p.add_argument("--simulations", type=int, default=200)
    p.add_argument("--rollouts", type=int, default=1)
    p.add_argument("--opponents", nargs="+", default=["random", "alphabeta:depth=2"])
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"MCTSBot ({args.simulations} simulations, {args.rollouts} random rollout each, UCT c=2) on {args.game}, "
          f"{args.pairs} pairs per opponent, seed {args.seed}")
    print("| opponent | games | MCTSBot score | as foxes | as geese | plies per game | seconds |")
    print("|---|---|---|---|---|---|---|")
    for opponent in args.opponents:
        r = play(args.game, args.pairs, args.simulations, args.rollouts, opponent, args.seed)
        print(f"| `{opponent}` | {r['games']} | {r['score']:.3f} | {r['as_foxes']:.3f} | {r['as_geese']:.3f} | "
              f"{r['plies']:.0f} | {r['seconds']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
