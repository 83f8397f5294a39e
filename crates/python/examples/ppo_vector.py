"""PPO on the vector environment, CleanRL style: one file, a masked
categorical policy, thousands of games stepped at once in Rust.

    python crates/python/examples/ppo_vector.py --iterations 50

Needs `pip install halatafl gymnasium torch`. The policy plays `--side`
against uniformly random replies played inside the environment
(`halatafl.envs.HalataflVectorEnv`, same-step autoreset, so every
observation it sees has legal moves in its mask). Before and after training
it plays `--eval-games` games with its most likely move and reports the mean
reward per game (+1 won, 0 drawn, -1 lost).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def build_policy(torch, obs_size: int, actions: int, hidden: int = 128):
    nn = torch.nn

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Flatten(), nn.Linear(obs_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
            self.logits = nn.Linear(hidden, actions)
            self.value = nn.Linear(hidden, 1)

        def forward(self, obs, mask):
            h = self.body(obs)
            logits = self.logits(h).masked_fill(~mask, -1e9)
            return torch.distributions.Categorical(logits=logits), self.value(h).squeeze(-1)

    return Policy()


def evaluate(torch, policy, env, games: int) -> float:
    """Mean reward over the first `games` games to end, most likely moves."""
    obs, _ = env.reset(seed=12345)
    rewards = []
    with torch.no_grad():
        while len(rewards) < games:
            o = torch.as_tensor(obs["observation"])
            m = torch.as_tensor(obs["action_mask"].astype(bool))
            dist, _ = policy(o, m)
            obs, r, done, _, _ = env.step(dist.probs.argmax(-1).numpy())
            rewards.extend(r[done].tolist())
    return float(np.mean(rewards[:games]))


def train(iterations: int, num_envs: int = 64, steps: int = 64, side: str = "geese", seed: int = 0,
          eval_games: int = 64, lr: float = 2.5e-3, epochs: int = 3, minibatches: int = 4,
          gamma: float = 0.995, lam: float = 0.95, clip: float = 0.2, ent_coef: float = 0.01) -> dict:
    import torch

    from halatafl.envs import HalataflVectorEnv

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    env = HalataflVectorEnv(num_envs, side=side, opponent="random")
    eval_env = HalataflVectorEnv(eval_games, side=side, opponent="random")
    obs_size = int(np.prod(env.single_observation_space["observation"].shape))
    policy = build_policy(torch, obs_size, env.single_action_space.n)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    before = evaluate(torch, policy, eval_env, eval_games)

    obs, _ = env.reset(seed=seed)
    shape = (steps, num_envs)
    b_obs = torch.zeros(shape + env.single_observation_space["observation"].shape)
    b_mask = torch.zeros(shape + (env.single_action_space.n,), dtype=torch.bool)
    b_act = torch.zeros(shape, dtype=torch.long)
    b_logp = torch.zeros(shape)
    b_rew = torch.zeros(shape)
    b_done = torch.zeros(shape)
    b_val = torch.zeros(shape)
    start = time.perf_counter()
    for _ in range(iterations):
        with torch.no_grad():
            for t in range(steps):
                o = torch.as_tensor(obs["observation"])
                m = torch.as_tensor(obs["action_mask"].astype(bool))
                dist, value = policy(o, m)
                a = dist.sample()
                b_obs[t], b_mask[t], b_act[t], b_logp[t], b_val[t] = o, m, a, dist.log_prob(a), value
                obs, r, done, _, _ = env.step(a.numpy())
                b_rew[t] = torch.as_tensor(r)
                b_done[t] = torch.as_tensor(done, dtype=torch.float32)
            # GAE: a game that ended at step t does not bootstrap from the next
            # row (the new game's start, same-step autoreset).
            _, next_value = policy(torch.as_tensor(obs["observation"]), torch.as_tensor(obs["action_mask"].astype(bool)))
            adv = torch.zeros(shape)
            last = torch.zeros(num_envs)
            for t in reversed(range(steps)):
                nv = next_value if t == steps - 1 else b_val[t + 1]
                nonterminal = 1.0 - b_done[t]
                delta = b_rew[t] + gamma * nv * nonterminal - b_val[t]
                last = delta + gamma * lam * nonterminal * last
                adv[t] = last
            ret = adv + b_val
        n = steps * num_envs
        f_obs, f_mask = b_obs.reshape((n,) + b_obs.shape[2:]), b_mask.reshape(n, -1)
        f_act, f_logp, f_adv, f_ret = b_act.reshape(n), b_logp.reshape(n), adv.reshape(n), ret.reshape(n)
        for _ in range(epochs):
            for idx in torch.randperm(n).chunk(minibatches):
                dist, value = policy(f_obs[idx], f_mask[idx])
                ratio = (dist.log_prob(f_act[idx]) - f_logp[idx]).exp()
                a = f_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - clip, 1 + clip)).mean()
                loss = pg + 0.5 * (value - f_ret[idx]).pow(2).mean() - ent_coef * dist.entropy().mean()
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
                opt.step()
    seconds = time.perf_counter() - start
    after = evaluate(torch, policy, eval_env, eval_games)
    return {"before": before, "after": after, "steps": iterations * steps * num_envs, "seconds": seconds}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=64, help="steps per environment per iteration")
    p.add_argument("--side", choices=["foxes", "geese"], default="geese")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-games", type=int, default=64)
    args = p.parse_args(argv)
    r = train(args.iterations, args.num_envs, args.steps, args.side, args.seed, args.eval_games)
    print(f"mean reward per game as the {args.side} against random: untrained {r['before']:+.3f}, "
          f"after {r['steps']} steps ({r['seconds']:.0f} s) {r['after']:+.3f}")


if __name__ == "__main__":
    main()
