"""Train sb3-contrib's MaskablePPO as the geese against `random` foxes, and
compare the trained policy with the untrained one on the same games.

    python crates/python/examples/maskable_ppo.py --timesteps 24000

Needs `pip install halatafl sb3-contrib` (and their torch). The environment
is `halatafl.envs.HalataflEnv` with `observation="flat"` (the form SB3's
checker accepts) and `action_masks()`, which MaskablePPO calls before each
step. The score is the mean reward per game over `--eval-games` games: +1
won, 0 drawn, -1 lost (or an illegal move, which a masked policy never plays).
"""

from __future__ import annotations

import argparse

import numpy as np


def make_env(side: str, opponent: str):
    from halatafl.envs import HalataflEnv

    return HalataflEnv(side=side, opponent=opponent, observation="flat")


def evaluate(model, side: str, opponent: str, games: int, seed: int) -> float:
    """Mean reward per game of the model's masked, deterministic policy."""
    env = make_env(side, opponent)
    total = 0.0
    for g in range(games):
        obs, _ = env.reset(seed=seed + g)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, reward, done, _, _ = env.step(int(action))
        total += reward
    return total / games


def train(timesteps: int, side: str = "geese", opponent: str = "random", seed: int = 0, eval_games: int = 20) -> dict:
    """Scores before and after training (same seeds, same games)."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    model = MaskablePPO(
        "MultiInputPolicy",
        make_env(side, opponent),
        n_steps=512,
        batch_size=128,
        learning_rate=1e-3,
        ent_coef=0.01,
        seed=seed,
        verbose=0,
    )
    before = evaluate(model, side, opponent, eval_games, seed=10_000 + seed)
    model.learn(total_timesteps=timesteps)
    after = evaluate(model, side, opponent, eval_games, seed=10_000 + seed)
    return {"before": before, "after": after, "timesteps": timesteps}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--timesteps", type=int, default=24_000)
    p.add_argument("--side", choices=["foxes", "geese"], default="geese")
    p.add_argument("--opponent", default="random", help="any agent spec of the package")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-games", type=int, default=20)
    args = p.parse_args(argv)
    result = train(args.timesteps, args.side, args.opponent, args.seed, args.eval_games)
    print(f"mean reward per game as the {args.side} against {args.opponent}: "
          f"untrained {result['before']:+.3f}, after {result['timesteps']} steps {result['after']:+.3f}")


if __name__ == "__main__":
    main()
