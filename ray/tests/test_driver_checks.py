"""The driver's checks of its arguments and of the cluster's resources, done
before anything starts (no Ray instance, no binary needed)."""

from __future__ import annotations

import pytest

from halatafl_ray import driver

# ci.toml's stages with one thread each: 1 CPU per stage, no GPU.
ONE_CPU = driver.stage_resources({"run": {"threads": 1, "torch_threads": 1}})


def test_workers_are_bounded_by_a_named_cap(capsys):
    with pytest.raises(SystemExit) as exit:
        driver.parse_args(["--config", "c.toml", "--workers", str(driver.MAX_WORKERS + 1)])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert f"--workers {driver.MAX_WORKERS + 1}: must be from 1 to {driver.MAX_WORKERS}" in err, err
    with pytest.raises(SystemExit):
        driver.parse_args(["--config", "c.toml", "--workers", str(10**12)])
    with pytest.raises(SystemExit):
        driver.parse_args(["--config", "c.toml", "--workers", "0"])
    assert driver.parse_args(["--config", "c.toml", "--workers", str(driver.MAX_WORKERS)]).workers == driver.MAX_WORKERS


def test_stages_that_fit_are_accepted():
    assert driver.unschedulable(ONE_CPU, 2, [{"CPU": 4.0}], "the local Ray instance", "--num-cpus 4") is None
    assert driver.unschedulable(ONE_CPU, 6, [{"CPU": 4.0}, {"CPU": 4.0}], "the cluster", "more CPUs") is None
    cuda = driver.stage_resources({"run": {"threads": 2, "torch_threads": 4, "device": "cuda"}})
    assert driver.unschedulable(cuda, 1, [{"CPU": 8.0, "GPU": 1.0}], "the cluster", "more CPUs") is None


def test_too_few_cpus_say_what_each_stage_asks_and_what_fits():
    why = driver.unschedulable(ONE_CPU, 3, [{"CPU": 4.0}], "the local Ray instance (--num-cpus 4)", "--num-cpus 5 or more")
    assert why == (
        "the stages cannot all be scheduled: the learner asks 1 CPU, each of the 3 self-play workers 1 CPU "
        "and the evaluator 1 CPU: 5 CPUs in all, but the local Ray instance (--num-cpus 4) has 4 CPUs and 0 GPUs; "
        "give --num-cpus 5 or more, or at most 2 --workers (`[run] threads` and `torch_threads` of the config "
        "set what each asks)"
    )
    # Not even one worker fits: no --workers advice.
    why = driver.unschedulable(ONE_CPU, 1, [{"CPU": 2.0}], "the local Ray instance (--num-cpus 2)", "--num-cpus 3 or more")
    assert "3 CPUs in all" in why and "has 2 CPUs" in why and "--workers" not in why.split(";")[1], why


def test_a_stage_larger_than_every_node_and_a_missing_gpu_are_named():
    big = driver.stage_resources({"run": {"threads": 1, "torch_threads": 8}})
    why = driver.unschedulable(big, 2, [{"CPU": 4.0}, {"CPU": 4.0}, {"CPU": 4.0}], "the Ray cluster at auto", "more CPUs")
    assert why == (
        "the stages cannot all be scheduled: the learner asks 8 CPUs, but no node of the Ray cluster at auto "
        "has that many (the largest has 4 CPUs and 0 GPUs)"
    )
    cuda = driver.stage_resources({"run": {"threads": 1, "torch_threads": 1, "device": "cuda:0"}})
    why = driver.unschedulable(cuda, 1, [{"CPU": 16.0}], "the Ray cluster at auto", "more CPUs")
    assert why.startswith('the stages cannot all be scheduled: the config says device = "cuda", and the learner asks 1 CPU and 1 GPU')
    assert "1 GPU in all, but the Ray cluster at auto has 16 CPUs and 0 GPUs" in why, why
