"""Runs halatafl's asynchronous training stages as Ray actors:
`python -m halatafl_ray --config configs/X.toml --workers N [--address auto]`
(README, "Ray: the stages on a cluster")."""
