//! The second hardening round: what the training, solver, tournament and
//! summary commands let through when used as a hostile user would. Every
//! case is refused before anything is written, with a message that says
//! what is wrong and where.

mod common;

use common::{bin, fails, halatafl, scratch, workspace};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A run directory as `train --config` leaves it before any stage: its
/// config (configs/ci.toml, optionally changed by `edit`) and nothing else.
fn bare_run(name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let dir = scratch(name);
    let run = dir.join("run");
    std::fs::create_dir_all(run.join("checkpoints")).unwrap();
    let text = std::fs::read_to_string(workspace().join("configs/ci.toml")).unwrap();
    std::fs::write(run.join("config.toml"), edit(text)).unwrap();
    run
}

/// Every file under `dir` with its bytes, to show that nothing changed.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            // The lock file a command takes is not a change to the run.
            if path.file_name().is_some_and(|n| n == "locks") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_second_train_on_a_running_run_is_refused() {
    let run = bare_run("train-lock", |t| t);
    // Another `train` holds the run's lock, as a running one does.
    std::fs::create_dir_all(run.join("locks")).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(run.join("locks/train.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let before = snapshot(&run);
    let err = fails(&["train", "--resume", path_str(&run)]);
    assert!(err.contains("is already running"), "{err}");
    assert_eq!(snapshot(&run), before, "nothing written, not even the log");
    drop(lock);
}

#[test]
fn resuming_an_asynchronous_run_is_refused_before_anything_is_written() {
    let run = bare_run("train-async", |t| t);
    std::fs::write(run.join("async.json"), "{\"from_generation\": 1}").unwrap();
    std::fs::write(run.join("run.json"), "{}").unwrap();
    let before = snapshot(&run);
    let err = fails(&["train", "--resume", path_str(&run), "--generations", "1"]);
    assert!(err.contains("asynchronous run"), "{err}");
    assert_eq!(
        snapshot(&run),
        before,
        "config.toml, run.json and log untouched"
    );
    let err = fails(&["train", "--resume", path_str(&run)]);
    assert!(err.contains("asynchronous run"), "{err}");
    assert!(!run.join("log.txt").exists(), "no `resuming` line");
    // A new run in its place names the stages that drive it, not --resume.
    let err = fails(&[
        "train",
        "--config",
        path_str(&workspace().join("configs/ci.toml")),
        "--run",
        path_str(&run),
    ]);
    assert!(
        err.contains("asynchronous run") && err.contains("halatafl stage learn --run"),
        "{err}"
    );
    assert!(!err.contains("--resume"), "{err}");
    assert_eq!(snapshot(&run), before);
}

#[test]
fn a_run_that_cannot_be_resumed_says_so_before_logging_resuming() {
    let run = bare_run("train-noprogress", |t| t);
    // Completed work without progress.json.
    std::fs::write(run.join("checkpoints/gen_0001.safetensors"), b"gen 1").unwrap();
    let err = fails(&["train", "--resume", path_str(&run)]);
    assert!(err.contains("no progress.json"), "{err}");
    assert!(!run.join("log.txt").exists(), "no `resuming` line logged");
}

#[test]
fn temporary_files_of_ended_processes_are_removed_on_start() {
    let run = bare_run("stale-temps", |t| t);
    // The process id of a process that has ended.
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let make = |name: &str, aged: bool| {
        let path = run.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let f = std::fs::File::create(&path).unwrap();
        if aged {
            f.set_modified(old).unwrap();
        }
        path
    };
    let stale = [
        make(
            &format!("checkpoints/.gen_0007.safetensors.tmp-{dead}"),
            true,
        ),
        make(&format!(".train.csv.tmp{dead}"), true),
        make(
            &format!("shards/gen_0003/.w1-000004.shard.tmp-{dead}"),
            true,
        ),
    ];
    // Just written (a live writer on another machine may own it), and one
    // of a live process (this test's): both kept.
    let young = make(
        &format!("checkpoints/.gen_0008.safetensors.tmp-{dead}"),
        false,
    );
    let live = make(
        &format!(
            "checkpoints/.gen_0009.safetensors.tmp-{}",
            std::process::id()
        ),
        true,
    );
    // A damaged train.csv stops the resume right after the run is opened.
    std::fs::write(run.join("train.csv"), "not a csv of this run\n").unwrap();
    let err = fails(&["train", "--resume", path_str(&run)]);
    assert!(err.contains("train.csv"), "{err}");
    for path in &stale {
        assert!(!path.exists(), "{} was left", path.display());
    }
    assert!(young.exists() && live.exists());
    let log = std::fs::read_to_string(run.join("log.txt")).unwrap();
    assert!(
        log.contains(&format!(".gen_0007.safetensors.tmp-{dead}"))
            && log.contains("which has ended"),
        "{log}"
    );
}

#[test]
fn a_bad_network_init_is_refused_before_the_run_directory_exists() {
    let dir = scratch("bad-init");
    let best = workspace().join("models/best.safetensors");
    let mut flipped = std::fs::read(&best).unwrap();
    let at = flipped.len() - 100;
    flipped[at] ^= 0x40;
    let damaged = dir.join("flipped.safetensors");
    std::fs::write(&damaged, flipped).unwrap();
    let base = std::fs::read_to_string(workspace().join("configs/ci.toml")).unwrap();
    let config = |name: &str, preset: &str, init: &Path| {
        let text = base
            .replace("preset = \"b1c16\"", &format!("preset = \"{preset}\""))
            .replace(
                "preset = \"",
                &format!("init = \"{}\"\npreset = \"", init.display()),
            )
            .replace("games = 6 ", "games = 0 ");
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    for (cfg, want) in [
        // Another shape: the shipped network is b4c32.
        (config("shape.toml", "b1c16", &best), "expected b1c16"),
        (
            config("flipped.toml", "b4c32", &damaged),
            "checksum mismatch",
        ),
    ] {
        let run = dir.join("run");
        let err = fails(&["train", "--config", path_str(&cfg), "--run", path_str(&run)]);
        assert!(err.contains("network.init") && err.contains(want), "{err}");
        assert!(
            !run.exists(),
            "no run directory: a rerun must not be told it holds a run"
        );
    }
}

#[test]
fn outputs_that_are_inputs_or_other_outputs_are_refused() {
    let dir = scratch("clash");
    let games = dir.join("games.csv");
    std::fs::write(&games, "keep me").unwrap();
    // The same file under another spelling.
    let dotted = dir.join(".").join("games.csv");
    let err = fails(&[
        "solve",
        "--from-games",
        path_str(&games),
        "--out",
        path_str(&dotted),
    ]);
    assert!(
        err.contains("--out") && err.contains("same file as --from-games"),
        "{err}"
    );
    assert_eq!(std::fs::read(&games).unwrap(), b"keep me");
    let t = dir.join("t.csv");
    let err = fails(&[
        "tournament",
        "random",
        "alphabeta:depth=1",
        "--games",
        "2",
        "--csv",
        path_str(&t),
        "--ratings",
        path_str(&t),
    ]);
    assert!(
        err.contains("--ratings") && err.contains("same file as --csv"),
        "{err}"
    );
    assert!(!t.exists());
    // Outputs that cannot be written are found before the first game.
    for ratings in [dir.as_path(), Path::new("/dev/full")] {
        let out = halatafl(&[
            "tournament",
            "random",
            "alphabeta:depth=1",
            "--games",
            "2",
            "--csv",
            path_str(&t),
            "--ratings",
            path_str(ratings),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("--ratings") && !err.contains("[1/"), "{err}");
        assert!(!t.exists());
    }
}

#[test]
fn tournaments_and_ladders_bound_their_games_in_all() {
    let dir = scratch("total-games");
    let csv = dir.join("x.csv");
    let err = fails(&[
        "tournament",
        "random",
        "alphabeta:depth=1",
        "alphabeta:depth=2",
        "--games",
        "1000000",
        "--csv",
        path_str(&csv),
    ]);
    assert!(
        err.contains("3 pairs of agents of 1000000 games each is 3000000 games in all"),
        "{err}"
    );
    let err = fails(&[
        "ladder",
        "random",
        "--rungs",
        "alphabeta:depth=1,alphabeta:depth=2",
        "--games",
        "1000000",
        "--csv",
        path_str(&csv),
    ]);
    assert!(err.contains("2 rungs of 1000000 games each"), "{err}");
    assert!(!csv.exists());
}

#[test]
fn solver_tables_and_counts_are_bounded_before_allocating() {
    if halatafl_solver::available_mib().is_none_or(|mib| mib >= 65536) {
        eprintln!("skipped: 64 GiB available (or unknown), the largest table may fit");
    } else {
        for method in ["dfpn", "dag"] {
            let err = fails(&[
                "solve",
                "--variant",
                "classic",
                "--method",
                method,
                "--tt-mb",
                "65536",
            ]);
            assert!(
                err.contains("--tt-mb 65536: more than the") && err.contains("MiB of memory"),
                "{method}: {err}"
            );
        }
    }
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--method",
        "retro",
        "--threads",
        "100000",
    ]);
    assert!(
        err.contains("--threads 100000") && err.contains("1 to 256"),
        "{err}"
    );
    let out = halatafl(&["solve", "--method", "retro", "--replay-lines", "100000000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a flag out of range: {err}");
    assert!(
        err.contains("--replay-lines") && err.contains("100000"),
        "{err}"
    );
}

#[test]
fn summary_refuses_rows_halatafl_never_writes() {
    let dir = scratch("summary-rows");
    let header = "game,opening,opening_moves,foxes,geese,result,reason,plies,moves,\
                  foxes_seconds,geese_seconds,seed,variant\n";
    let good = "1,0,,random,random,geese,pen-filled,2,c7-c6 a3-a4,0.1,0.2,7,two-foxes\n";
    for (bad, want) in [
        (
            "2,0,,random,random,pigs,pen-filled,2,c7-c6 a3-a4,0.1,0.2,7,two-foxes\n",
            "result `pigs`",
        ),
        (
            "2,0,,random,random,geese,pen-filled,2,c7-c6 a3-a4,0.1,0.2,7,chess\n",
            "variant `chess`",
        ),
        (
            "2,0,,random,random,geese,pen-filled,2,c7-c6 a3-a4,NaN,0.2,7,two-foxes\n",
            "foxes_seconds NaN",
        ),
        (
            "2,0,,random,random,draw,pen-filled,2,c7-c6 a3-a4,0.1,0.2,7,two-foxes\n",
            "cannot end by `pen-filled`",
        ),
    ] {
        let path = dir.join("g.csv");
        std::fs::write(&path, format!("{header}{good}{bad}")).unwrap();
        let err = fails(&["summary", path_str(&path)]);
        assert!(
            err.contains(&format!("{}, line 3", path.display())) && err.contains(want),
            "{err}"
        );
    }
}

#[test]
fn a_huge_position_string_gives_a_short_error_that_keeps_the_place() {
    let fen = format!(
        "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f {}",
        "9".repeat(100_000)
    );
    let err = fails(&["moves", "--fen", &fen]);
    assert!(
        err.len() < 600,
        "{} bytes: {}",
        err.len(),
        &err[..600.min(err.len())]
    );
    let whole = format!("{} characters", fen.chars().count());
    assert!(
        err.contains("quiet-ply counter") && err.contains(&whole),
        "{err}"
    );
}

#[test]
fn network_agents_refuse_another_variant_and_kinds_are_parsed() {
    let dir = scratch("net-variant");
    let csv = dir.join("x.csv");
    let err = fails(&[
        "match",
        "best",
        "random",
        "--variant",
        "classic",
        "--games",
        "2",
        "--csv",
        path_str(&csv),
    ]);
    assert!(
        err.contains("trained on two-foxes") && err.contains("this game is classic geese=13"),
        "{err}"
    );
    // The self-play opponent: `best` is a network, `nettle` an unknown kind.
    let base = std::fs::read_to_string(workspace().join("configs/ci.toml")).unwrap();
    for (spec, want, unwanted) in [
        ("best", "selfplay.opponent", "unknown"),
        ("nettle", "nettle", "non-network"),
    ] {
        let text = base.replace(
            "samples_per_shard = 4096",
            &format!("samples_per_shard = 4096\nopponent = \"{spec}\"\nopponent_fraction = 0.5"),
        );
        let cfg = dir.join("c.toml");
        std::fs::write(&cfg, text).unwrap();
        let run = dir.join("run");
        let err = fails(&["train", "--config", path_str(&cfg), "--run", path_str(&run)]);
        assert!(
            err.contains(want) && !err.contains(unwanted),
            "{spec}: {err}"
        );
        assert!(!run.exists());
    }
    let _ = bin();
}
