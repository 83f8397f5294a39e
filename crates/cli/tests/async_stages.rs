//! The asynchronous mode end to end through the binary: a run made with
//! `train --init-only`, then two `selfplay` workers, the `learn`er and the
//! `evaluate`r as processes on it until `finished.json`; once straight, once
//! with the learner and a worker killed (SIGKILL) mid-run and started again.
//! Either way: every checkpoint once, train.csv and eval.csv rows of every
//! generation exactly once, shards only of generations whose checkpoint
//! exists, no half-written file read, and `report` works.

mod common;

use common::{bin, read_csv, scratch, workspace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Generations of the test runs (configs/ci.toml has 2).
const GENERATIONS: u32 = 3;

/// configs/ci.toml (its [async] section: 2 games per shard, ratio 4) with
/// three generations and one thread per process: four processes share the
/// cores, and more threads only make them wait for each other (two threads
/// each made these tests take minutes instead of seconds).
fn async_config(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(workspace().join("configs/ci.toml")).unwrap();
    let mut text = text.replace(
        "generations = 2\n",
        &format!("generations = {GENERATIONS}\n"),
    );
    for (from, to) in [
        ("threads = 2 ", "threads = 1 "),
        ("torch_threads = 2 ", "torch_threads = 1 "),
    ] {
        assert!(text.contains(from), "ci.toml lost `{from}`");
        text = text.replacen(from, to, 1);
    }
    assert!(text.contains("[async]"), "ci.toml lost its [async] section");
    let path = dir.join("async.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn init_run(config: &Path, run: &Path) {
    common::train_new_run_with(config, run, &["--init-only"]);
    assert!(run.join("async.json").exists());
    assert!(run.join("checkpoints/gen_0000.safetensors").exists());
    assert!(!run.join("checkpoints/gen_0001.safetensors").exists());
}

fn start(run: &Path, args: &[&str]) -> Child {
    Command::new(bin())
        .arg("stage")
        .args(args)
        .arg("--run")
        .arg(run)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` to exit successfully, within `limit`.
fn wait_ok(mut child: Child, what: &str, limit: Duration) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child.stderr.take().unwrap().read_to_string(&mut err).ok();
            assert!(status.success(), "{what} failed: {err}");
            return;
        }
        if started.elapsed() > limit {
            child.kill().ok();
            panic!("{what} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn generation_counts(rows: &[BTreeMap<String, String>]) -> BTreeMap<u32, usize> {
    let mut counts = BTreeMap::new();
    for r in rows {
        *counts
            .entry(r["generation"].parse::<u32>().unwrap())
            .or_insert(0) += 1;
    }
    counts
}

/// What every finished asynchronous run must hold.
fn check_finished_run(run: &Path) {
    assert!(run.join("finished.json").exists());
    for g in 0..=GENERATIONS {
        let ckpt = run.join(format!("checkpoints/gen_{g:04}.safetensors"));
        assert!(ckpt.exists(), "{} missing", ckpt.display());
    }
    assert!(!run
        .join(format!(
            "checkpoints/gen_{:04}.safetensors",
            GENERATIONS + 1
        ))
        .exists());
    assert!(!run.join("learner-pending.json").exists());
    // train.csv: ci.toml logs every 5 of 10 steps, so 2 rows per generation
    // (generation 0's 10 bootstrap steps too), steps rising without a gap.
    let train = read_csv(&run.join("train.csv"));
    let counts = generation_counts(&train);
    assert_eq!(
        counts,
        (0..=GENERATIONS).map(|g| (g, 2)).collect(),
        "train.csv rows per generation"
    );
    let steps: Vec<u64> = train.iter().map(|r| r["step"].parse().unwrap()).collect();
    assert_eq!(
        steps,
        (1..=2 * (GENERATIONS as u64 + 1))
            .map(|i| 5 * i)
            .collect::<Vec<_>>()
    );
    // eval.csv: 4 games against random for every generation, and against
    // previous from generation 1 on.
    let eval = read_csv(&run.join("eval.csv"));
    let expected: BTreeMap<u32, usize> = (0..=GENERATIONS)
        .map(|g| (g, if g == 0 { 4 } else { 8 }))
        .collect();
    assert_eq!(generation_counts(&eval), expected, "eval.csv rows");
    let mut seen = std::collections::BTreeSet::new();
    for r in &eval {
        assert!(
            seen.insert((
                r["generation"].clone(),
                r["opponent"].clone(),
                r["game"].clone()
            )),
            "duplicate eval row {r:?}"
        );
    }
    // selfplay.csv: generation 0 and at most one row per later generation.
    let selfplay = generation_counts(&read_csv(&run.join("selfplay.csv")));
    assert_eq!(selfplay.get(&0), Some(&1));
    assert!(selfplay.values().all(|&n| n == 1), "{selfplay:?}");
    assert!(selfplay.keys().all(|&g| g <= GENERATIONS));
    // Shards: of generations 1..=GENERATIONS (made by checkpoints that
    // exist), named by worker and sequence, complete.
    let mut worker_shards = 0;
    let mut games_files = 0;
    for entry in std::fs::read_dir(run.join("shards")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let g: u32 = name.strip_prefix("gen_").unwrap().parse().unwrap();
        assert!(g <= GENERATIONS, "shards of generation {g}");
        for shard in std::fs::read_dir(entry.path()).unwrap() {
            let name = shard.unwrap().file_name().to_string_lossy().into_owned();
            if g == 0 {
                assert!(name.starts_with("expert_"), "{name}");
                continue;
            }
            if name.starts_with('.') {
                continue; // a killed writer's temporary file: never read
            }
            if let Some(stem) = name.strip_suffix(".games.csv") {
                // The piece's games, beside its shard: rows that replay.
                let (worker, seq) = stem
                    .strip_prefix('w')
                    .and_then(|n| n.split_once('-'))
                    .unwrap();
                assert!(["1", "2"].contains(&worker) && seq.len() == 6, "{name}");
                let rows = read_csv(&entry.path().join(&name));
                assert!(!rows.is_empty(), "{name}");
                for row in &rows {
                    assert_eq!(row["generation"], g.to_string(), "{name}");
                    let moves = row["moves"].split_whitespace().count();
                    assert_eq!(moves.to_string(), row["plies"], "{name}");
                }
                games_files += 1;
                continue;
            }
            let (worker, seq) = name
                .strip_prefix('w')
                .and_then(|n| n.strip_suffix(".shard"))
                .and_then(|n| n.split_once('-'))
                .unwrap_or_else(|| panic!("shard name {name}"));
            assert!(["1", "2"].contains(&worker), "{name}");
            assert_eq!(seq.len(), 6, "{name}");
            worker_shards += 1;
        }
    }
    assert!(worker_shards > 0);
    assert!(games_files > 0);
    let out = Command::new(bin()).arg("report").arg(run).output().unwrap();
    assert!(
        out.status.success(),
        "report: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(run.join("report/report.md").exists());
}

const LIMIT: Duration = Duration::from_secs(240);

/// The two runs take turns: each has four processes that use every core it
/// gets (workers play until the run ends), so side by side they only slow
/// each other's learner down.
static ONE_RUN_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_run_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn selfplay_workers_learner_and_evaluator_finish_a_run() {
    let _turn = one_run_at_a_time();
    let dir = scratch("async");
    let config = async_config(&dir);
    let run = dir.join("run");
    init_run(&config, &run);
    let workers = [
        start(&run, &["selfplay", "--worker", "1"]),
        // `--device` replaces the config's device for one process.
        start(&run, &["selfplay", "--worker", "2", "--device", "cpu"]),
    ];
    let evaluator = start(&run, &["evaluate"]);
    // A second worker of one id is refused while the first runs; the lock
    // goes with the process. Checked before the learner starts: worker 1
    // cannot finish then (it waits for checkpoints once it has played
    // enough), whereas with the learner running the whole run can end
    // before a second process has loaded (it did on a loaded CI machine).
    // Worker 1 takes its lock right after creating the lock file.
    let lock = run.join("locks/selfplay-w1.lock");
    let waited = Instant::now();
    while !lock.exists() {
        assert!(waited.elapsed() < LIMIT, "worker 1 never took its lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let out = Command::new(bin())
        .args(["stage", "selfplay", "--worker", "1", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("already running"), "{err}");
    let learner = start(&run, &["learn"]);
    wait_ok(learner, "learn", LIMIT);
    for (i, w) in workers.into_iter().enumerate() {
        wait_ok(w, &format!("selfplay worker {}", i + 1), LIMIT);
    }
    wait_ok(evaluator, "evaluate", LIMIT);
    check_finished_run(&run);
    // `train --resume` refuses an asynchronous run.
    let out = Command::new(bin())
        .args(["train", "--resume"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("asynchronous"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn killed_learner_and_worker_restart_without_loss_or_duplicates() {
    let _turn = one_run_at_a_time();
    let dir = scratch("async-kill");
    let config = async_config(&dir);
    let run = dir.join("run");
    // The stages refuse a run not made with --init-only.
    let out = Command::new(bin())
        .args(["learn", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    init_run(&config, &run);
    let worker2 = start(&run, &["selfplay", "--worker", "2"]);
    let evaluator = start(&run, &["evaluate"]);
    let checkpoint = |g: u32| run.join(format!("checkpoints/gen_{g:04}.safetensors"));
    // Kill worker 1 and the learner a few times at different moments: while
    // the learner waits or trains, and right after it published.
    let mut worker1 = start(&run, &["selfplay", "--worker", "1"]);
    let mut learner = start(&run, &["learn"]);
    let started = Instant::now();
    for (i, pause) in [700u64, 1500, 400].into_iter().enumerate() {
        std::thread::sleep(Duration::from_millis(pause));
        for child in [&mut learner, &mut worker1] {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
        }
        if i == 1 {
            // A kill after a publication: wait for checkpoint 1 first.
            while !checkpoint(1).exists() && started.elapsed() < LIMIT {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        worker1 = start(&run, &["selfplay", "--worker", "1"]);
        learner = start(&run, &["learn"]);
    }
    wait_ok(learner, "learn", LIMIT);
    wait_ok(worker1, "selfplay worker 1", LIMIT);
    wait_ok(worker2, "selfplay worker 2", LIMIT);
    wait_ok(evaluator, "evaluate", LIMIT);
    check_finished_run(&run);
    // Started again on a finished run, each stage stops at once.
    for args in [
        &["learn"][..],
        &["selfplay", "--worker", "1"],
        &["evaluate"],
    ] {
        wait_ok(start(&run, args), args[0], Duration::from_secs(60));
    }
    check_finished_run(&run);
    std::fs::remove_dir_all(&dir).ok();
}
