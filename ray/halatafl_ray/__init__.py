"""Runs halatafl's asynchronous training stages as Ray actors:
`python -m halatafl_ray --config configs/X.toml --workers N [--address auto]`
(docs/async-and-ray.md, "Ray: the stages on a cluster")."""
