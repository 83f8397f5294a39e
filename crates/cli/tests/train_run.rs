//! The training pipeline end to end through the binary, on configs/ci.toml
//! with one thread: a run killed with SIGKILL at arbitrary moments and resumed
//! ends exactly where an uninterrupted run ends (same checkpoints, same games,
//! no duplicate CSV rows), which also shows that one thread is reproducible.
//! ci.toml starts from an expert (generation 0 = alpha-beta games); a second
//! run checks the start from scratch, and a third the start from its
//! checkpoint (`network.init`) with games against a fixed opponent.

mod common;

use common::{bin, read_csv, scratch, train_new_run, workspace};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// configs/ci.toml with one worker thread, written next to the runs.
fn one_thread_config(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(workspace().join("configs/ci.toml")).unwrap();
    let text = text.replace("threads = 2 ", "threads = 1 ");
    assert!(
        text.contains("threads = 1 "),
        "ci.toml's [run] threads line changed"
    );
    let path = dir.join("ci1.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A CSV with the columns that measure time removed and the run's own
/// directory (which agent specs name) replaced by `RUN`.
fn csv_without_timing(path: &Path) -> Vec<Vec<String>> {
    let run_dir = path.parent().unwrap().display().to_string();
    let timing = |h: &str| h.contains("second") || h.ends_with("_rate") || h == "net_batch_mean";
    read_csv(path)
        .into_iter()
        .map(|row| {
            row.into_iter()
                .filter(|(h, _)| !timing(h))
                .map(|(h, v)| format!("{h}={}", v.replace(&run_dir, "RUN")))
                .collect()
        })
        .collect()
}

fn tensors(path: &Path) -> Vec<(String, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut out: Vec<(String, Vec<u8>)> = st
        .tensors()
        .into_iter()
        .map(|(n, v)| (n, v.data().to_vec()))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn killed_and_resumed_run_equals_an_uninterrupted_one() {
    let dir = scratch("resume");
    let config = one_thread_config(&dir);
    let clean = dir.join("clean");
    let started = Instant::now();
    let out = train_new_run(&config, &clean);
    let full = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("run: {}", clean.display())),
        "{stdout}"
    );
    // The end-of-run scoreboard: a line per opponent, and the report.
    assert!(
        stdout.contains("opponent  games  score [95% interval]"),
        "{stdout}"
    );
    assert!(stdout.lines().any(|l| l.starts_with("random ")), "{stdout}");
    assert!(clean.join("report/report.md").exists(), "{stdout}");

    // Kill twice at different moments, then let it finish.
    let killed = dir.join("killed");
    let mut child = Command::new(bin())
        .args(["train", "--config"])
        .arg(&config)
        .arg("--run")
        .arg(&killed)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(full.mul_f64(0.4));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    for fraction in [0.3, 1.0] {
        let mut child = Command::new(bin())
            .args(["train", "--resume"])
            .arg(&killed)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if fraction < 1.0 {
            std::thread::sleep(full.mul_f64(fraction));
            child.kill().unwrap();
            child.wait().unwrap();
        } else {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    for csv in ["selfplay.csv", "train.csv", "eval.csv"] {
        assert_eq!(
            csv_without_timing(&clean.join(csv)),
            csv_without_timing(&killed.join(csv)),
            "{csv} differs"
        );
    }
    // ci.toml carries unfinished games over (selfplay.carry_over): the
    // games each generation left running are the same, and some finished
    // in the next generation.
    for g in 1..=2 {
        let name = format!("shards/gen_{g:04}/running.json");
        assert_eq!(
            std::fs::read(clean.join(&name)).unwrap(),
            std::fs::read(killed.join(&name)).unwrap(),
            "{name} differs"
        );
        let name = format!("shards/gen_{g:04}/games.csv");
        assert_eq!(
            read_csv(&clean.join(&name)),
            read_csv(&killed.join(&name)),
            "{name} differs"
        );
    }
    let log = std::fs::read_to_string(killed.join("log.txt")).unwrap();
    assert!(
        log.lines().any(|l| l.contains("generation 2 self-play")
            && !l.contains(" 0 finished games begun earlier")
            && l.contains(" finished games begun earlier")),
        "{log}"
    );
    let rows = csv_without_timing(&killed.join("selfplay.csv"));
    assert_eq!(
        rows.len(),
        3,
        "one self-play row per generation, 0 included"
    );
    check_expert_generation(&killed);
    for g in 0..=2 {
        let name = format!("checkpoints/gen_{g:04}.safetensors");
        assert_eq!(
            tensors(&clean.join(&name)),
            tensors(&killed.join(&name)),
            "{name} differs"
        );
    }
    // No temporary file is left behind where readers look.
    for sub in [
        "checkpoints",
        "shards/gen_0000",
        "shards/gen_0001",
        "shards/gen_0002",
    ] {
        for entry in std::fs::read_dir(killed.join(sub)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".tmp"), "leftover {sub}/{name}");
        }
    }
    // A finished run refuses a second `--config` into the same directory.
    let out = Command::new(bin())
        .args(["train", "--config"])
        .arg(&config)
        .arg("--run")
        .arg(&clean)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--resume"));
    extend_finished_run(&clean);
    std::fs::remove_dir_all(&dir).ok();
}

/// `--resume RUN --generations N` trains a finished run longer: the completed
/// generations stay byte for byte, the next one is added once, and the change
/// is recorded. Shortening below what is done is refused and changes nothing.
fn extend_finished_run(run: &Path) {
    let resume = |generations: &str| {
        Command::new(bin())
            .args(["train", "--resume"])
            .arg(run)
            .args(["--generations", generations])
            .output()
            .unwrap()
    };
    let before_config = std::fs::read_to_string(run.join("config.toml")).unwrap();
    let out = resume("1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--generations 1") && err.contains("reached generation 2"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(run.join("config.toml")).unwrap(),
        before_config
    );

    let gen2 = tensors(&run.join("checkpoints/gen_0002.safetensors"));
    let selfplay_before = csv_without_timing(&run.join("selfplay.csv"));
    let out = resume("3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Generation 3 was evaluated: the scoreboard has its random line.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("generation 3 "), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("random ")), "{stdout}");
    let selfplay = csv_without_timing(&run.join("selfplay.csv"));
    assert_eq!(selfplay.len(), 4, "generations 0..=3, each once");
    assert_eq!(selfplay[..3], selfplay_before[..]);
    assert_eq!(tensors(&run.join("checkpoints/gen_0002.safetensors")), gen2);
    assert!(run.join("checkpoints/gen_0003.safetensors").exists());
    let eval = read_csv(&run.join("eval.csv"));
    assert!(
        eval.iter().any(|r| r["generation"] == "3"),
        "the new last generation is evaluated"
    );
    let config = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(config.contains("generations = 3"), "{config}");
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    let change = &info["generations_changed"][0];
    assert_eq!(
        (change["from"].as_u64(), change["to"].as_u64()),
        (Some(2), Some(3))
    );
    assert!(std::fs::read_to_string(run.join("log.txt"))
        .unwrap()
        .contains("generations 2 -> 3"));
    // Extending to the count it has is a plain resume of a finished run.
    let out = resume("3");
    assert!(out.status.success());
    assert_eq!(csv_without_timing(&run.join("selfplay.csv")).len(), 4);
}

/// Generation 0 of a bootstrapped run: the expert's games in bootstrap.csv,
/// one sample per position after each opening, and an evaluation of the
/// imitation network (with no `previous` to play).
fn check_expert_generation(run: &Path) {
    let games = read_csv(&run.join("bootstrap.csv"));
    assert_eq!(games.len(), 6, "[bootstrap] games = 6 in ci.toml");
    let mut positions = 0;
    for g in &games {
        assert_eq!(g["foxes"], "alphabeta:depth=1");
        assert_eq!(g["geese"], "alphabeta:depth=1");
        assert_eq!(g["opening_moves"].split(' ').count(), 4);
        positions += g["plies"].parse::<usize>().unwrap() - 4;
    }
    let selfplay = read_csv(&run.join("selfplay.csv"));
    assert_eq!(selfplay[0]["generation"], "0");
    assert_eq!(selfplay[0]["games"], "6");
    assert_eq!(selfplay[0]["samples"], positions.to_string());
    let eval = read_csv(&run.join("eval.csv"));
    let opponents_of = |g: &str| -> Vec<String> {
        eval.iter()
            .filter(|r| r["generation"] == g)
            .map(|r| r["opponent"].clone())
            .collect()
    };
    assert_eq!(opponents_of("0"), vec!["random"; 4]);
    assert!(opponents_of("1").contains(&"previous".to_string()));
}

#[test]
fn a_run_without_an_expert_starts_from_a_random_network() {
    let dir = scratch("scratch");
    let text = std::fs::read_to_string(workspace().join("configs/ci.toml")).unwrap();
    let text = text.replace(
        "games = 6                # expert",
        "games = 0                # expert",
    );
    assert!(
        text.contains("games = 0  "),
        "ci.toml's [bootstrap] games line changed"
    );
    let config = dir.join("scratch.toml");
    std::fs::write(&config, &text).unwrap();
    let run = dir.join("run");
    // `--generations` overrides the config's 2, and config.toml records it.
    let out = common::train_new_run_with(&config, &run, &["--generations", "1"]);
    // While the run goes, the console shows one line per evaluation
    // opponent; the full summaries are in the log.
    let console = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = console
        .lines()
        .filter(|l| l.starts_with("generation 1 vs "))
        .collect();
    assert_eq!(lines.len(), 2, "random and previous: {console}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains(" over ") && l.contains("as geese")),
        "{console}"
    );
    assert!(!console.contains("ptnml"), "{console}");
    let log = std::fs::read_to_string(run.join("log.txt")).unwrap();
    assert!(
        log.contains("generation 1 vs random:\n") && log.contains("ptnml"),
        "{log}"
    );
    // ci.toml's two workers and two libtorch threads on a CPU: a server each.
    assert!(
        log.contains("self-play: 2 inference servers of 1 libtorch thread each"),
        "{log}"
    );
    let recorded = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(recorded.contains("generations = 1\n"), "{recorded}");
    assert!(run.join("checkpoints/gen_0000.safetensors").exists());
    assert!(!run.join("bootstrap.csv").exists());
    assert!(!run.join("shards/gen_0000").exists());
    assert!(!run.join("checkpoints/gen_0002.safetensors").exists());
    let generations: Vec<String> = read_csv(&run.join("selfplay.csv"))
        .into_iter()
        .map(|r| r["generation"].clone())
        .collect();
    assert_eq!(generations, vec!["1"]);
    assert!(read_csv(&run.join("eval.csv"))
        .iter()
        .all(|r| r["generation"] != "0"));

    // A second run starts from this one's generation 1 (`network.init`) and
    // plays all its games against a fixed opponent, on either side.
    let trained = run.join("checkpoints/gen_0001.safetensors");
    let text = text
        .replace(
            "cache_entries = 262144",
            &format!(
                "init = {:?}\ninference_servers = 1\ncache_entries = 262144",
                trained.display().to_string()
            ),
        )
        .replace(
            "samples_per_shard = 4096",
            "samples_per_shard = 4096\nopponent = \"alphabeta:depth=1\"\nopponent_fraction = 1.0\nopponent_side = \"either\"",
        );
    let config = dir.join("from-checkpoint.toml");
    std::fs::write(&config, &text).unwrap();
    let second = dir.join("second");
    common::train_new_run_with(&config, &second, &["--generations", "1"]);
    assert_eq!(
        tensors(&second.join("checkpoints/gen_0000.safetensors")),
        tensors(&trained),
        "generation 0 is not the init checkpoint"
    );
    let log = std::fs::read_to_string(second.join("log.txt")).unwrap();
    assert!(log.contains("gen_0001.safetensors (network.init)"), "{log}");
    assert!(!log.contains("inference servers"), "{log}");
    assert!(
        log.contains("8 against selfplay.opponent (the network won or drew "),
        "{log}"
    );
    assert!(second.join("checkpoints/gen_0001.safetensors").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A classic run judged on a solved suite each evaluated generation: its
/// `accuracy.csv` counts what `halatafl accuracy` counts for the same
/// checkpoint, and the report draws it.
#[test]
fn a_run_with_a_suite_records_its_error_rates() {
    let dir = scratch("suite");
    let suite_text =
        std::fs::read_to_string(workspace().join("data/suites/classic13.csv")).unwrap();
    let suite = dir.join("suite.csv");
    let head: Vec<&str> = suite_text.lines().take(31).collect();
    std::fs::write(&suite, head.join("\n") + "\n").unwrap();
    let text = std::fs::read_to_string(one_thread_config(&dir)).unwrap();
    let text = text
        .replace("variant = \"two-foxes\"", "variant = \"classic geese=13\"")
        .replace(
            "[eval]\n",
            &format!("[eval]\nsuite = {:?}\n", suite.display().to_string()),
        )
        .replace(
            "samples_per_shard = 4096",
            &format!(
                "samples_per_shard = 4096\nstart_position_fraction = 0.5\nstart_games = [{:?}]",
                workspace()
                    .join("data/suites/classic13-games.csv")
                    .display()
                    .to_string()
            ),
        );
    assert!(
        text.contains("classic geese=13")
            && text.contains("suite = ")
            && text.contains("start_games"),
        "ci.toml changed"
    );
    let config = dir.join("suite.toml");
    std::fs::write(&config, &text).unwrap();
    let run = dir.join("run");
    common::train_new_run_with(&config, &run, &["--generations", "1"]);
    let rows = read_csv(&run.join("accuracy.csv"));
    let all: Vec<_> = rows.iter().filter(|r| r["group"] == "all").collect();
    let seen: Vec<(&str, &str)> = all
        .iter()
        .map(|r| (r["generation"].as_str(), r["agent"].as_str()))
        .collect();
    assert_eq!(
        seen,
        [("0", "raw"), ("0", "search"), ("1", "raw"), ("1", "search")]
    );
    assert!(all.iter().all(|r| r["positions"] == "30"), "{all:?}");
    // The raw policy is deterministic: the command-line judge agrees.
    let ckpt = run.join("checkpoints/gen_0001.safetensors");
    let out = common::halatafl(&[
        "accuracy",
        &format!("net:ckpt={}", ckpt.display()),
        "--suite",
        &suite.display().to_string(),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cli_all = json["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "all")
        .unwrap();
    assert_eq!(
        all[2]["errors"],
        cli_all["errors"].to_string(),
        "accuracy.csv and `halatafl accuracy` disagree"
    );
    let log = std::fs::read_to_string(run.join("log.txt")).unwrap();
    assert!(
        log.contains("generation 1 on ") && log.contains("(30 positions): error rate raw "),
        "{log}"
    );
    assert!(run.join("report/accuracy.svg").exists());
    // Games began at positions of the round robin's games (and the expert's).
    assert!(log.contains("begun at positions of earlier games"), "{log}");
    // A suite of another variant is refused before the run starts.
    let two_foxes = text.replace("variant = \"classic geese=13\"", "variant = \"two-foxes\"");
    std::fs::write(&config, two_foxes).unwrap();
    let refused = common::fails(&[
        "train",
        "--config",
        &config.display().to_string(),
        "--run",
        &dir.join("other").display().to_string(),
    ]);
    assert!(
        refused.contains("eval.suite") && refused.contains("this run plays two-foxes"),
        "{refused}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_configs_are_refused_with_the_key_named() {
    let dir = scratch("badconfig");
    let path = dir.join("bad.toml");
    for (text, expected) in [
        ("[search]\nsimulatons = 3\n", "simulatons"),
        ("[network]\npreset = \"big\"\n", "preset"),
        (
            "[bootstrap]\ngames = 5\nagent = \"alphabeta:dept=4\"\n",
            "bootstrap.agent",
        ),
        (
            "[bootstrap]\ngames = 5\nagent = \"net:ckpt=x\"\n",
            "non-network",
        ),
        ("[eval]\nopponents = [\"mcts:sims=-1\"]\n", "eval.opponents"),
        // Range checks: the key as section.key and its range.
        (
            "[train]\nlr = nan\n",
            "train.lr = NaN: must be a number in (0, 10]",
        ),
        ("[run]\nthreads = 100000\n", "run.threads = 100000"),
        (
            "[bootstrap]\nopening_plies = 100000\n",
            "bootstrap.opening_plies",
        ),
        ("[eval]\nsimulations = 0\n", "eval.simulations = 0"),
        (
            "[eval]\nopponents = [\"net:ckpt=missing.safetensors\"]\n",
            "missing.safetensors",
        ),
        ("[run]\ngenerations = 3\n", "--generations 0"),
        (
            "[selfplay]\nopponent_fraction = 0.5\nopponent = \"alphabeta:dept=4\"\n",
            "selfplay.opponent",
        ),
        (
            "[network]\ninit = \"missing.safetensors\"\n",
            "network.init",
        ),
    ] {
        std::fs::write(&path, text).unwrap();
        let out = Command::new(bin())
            .args(["train", "--config"])
            .arg(&path)
            .arg("--run")
            .arg(dir.join("r"))
            .args(if expected == "--generations 0" {
                &["--generations", "0"][..]
            } else {
                &[][..]
            })
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(expected) && err.contains("bad.toml"), "{err}");
        assert!(!dir.join("r").exists(), "no run directory for a bad config");
    }
    let out = Command::new(bin())
        .args(["train", "--resume"])
        .arg(dir.join("nothing-here"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));
    std::fs::remove_dir_all(&dir).ok();
}
