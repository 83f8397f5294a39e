//! A report from a hand-made run directory: every file is written, the plots
//! are real images, and the Markdown carries the numbers of the CSVs.

use halatafl_dataio::{AccuracyRow, EvalRow, SelfPlayRow, TrainRow};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("halatafl-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_csv<T: serde::Serialize>(path: &Path, rows: &[T]) {
    let mut w = csv::Writer::from_path(path).unwrap();
    for r in rows {
        w.serialize(r).unwrap();
    }
    w.flush().unwrap();
}

fn selfplay_row(generation: u32, resign_checked: usize, resign_false: usize) -> SelfPlayRow {
    SelfPlayRow {
        generation,
        games: 10,
        samples: 400,
        foxes_wins: 6,
        geese_wins: 3,
        draws: 1,
        fewer_than_nine: 5,
        pen_filled: 3,
        no_moves: 0,
        threefold: 1,
        fifty_moves: 0,
        fewer_than_four: 0,
        resigned: 1,
        max_plies: 0,
        mean_plies: 40.0 + generation as f64,
        resign_checked,
        resign_false,
        games_per_second: 2.0,
        positions_per_second: 80.0,
        seconds: 5.0,
        net_batch_mean: 3.0,
        cache_hit_rate: 0.1,
    }
}

fn eval_row(generation: u32, game: usize, result: &str) -> EvalRow {
    let me = format!("net:ckpt=/x/checkpoints/gen_{generation:04}.safetensors,sims=8");
    let (foxes, geese) = if game % 2 == 1 {
        (me, "random".to_string())
    } else {
        ("random".to_string(), me)
    };
    EvalRow {
        generation,
        opponent: "random".into(),
        game,
        opening: 0,
        opening_moves: String::new(),
        foxes,
        geese,
        result: result.into(),
        reason: "no-moves".into(),
        plies: 30,
        moves: String::new(),
        foxes_seconds: 0.5,
        geese_seconds: 0.5,
        seed: 3,
        variant: "two-foxes".into(),
    }
}

fn fake_run(dir: &Path) {
    std::fs::write(
        dir.join("config.toml"),
        "[run]\ngenerations = 2\n[game]\nvariant = \"two-foxes\"\n[eval]\nopponents = [\"random\"]\ngames = 4\n",
    )
    .unwrap();
    write_csv(
        &dir.join("selfplay.csv"),
        &[selfplay_row(1, 0, 0), selfplay_row(2, 4, 1)],
    );
    let train: Vec<TrainRow> = (1u32..=4)
        .map(|i| TrainRow {
            generation: i.div_ceil(2),
            step: i as u64 * 5,
            policy_loss: 2.0 - 0.1 * i as f64,
            value_loss: 1.0 - 0.2 * i as f64,
            l2_loss: 0.02,
            total_loss: 3.0 - 0.3 * i as f64,
            lr: 0.0005 * i as f64,
            grad_norm: 1.0,
            samples_per_second: 500.0,
            window_samples: 400,
        })
        .collect();
    write_csv(&dir.join("train.csv"), &train);
    write_csv(
        &dir.join("eval.csv"),
        &[
            eval_row(1, 1, "foxes"),
            eval_row(1, 2, "foxes"),
            eval_row(2, 1, "foxes"),
            eval_row(2, 2, "geese"),
        ],
    );
}

#[test]
fn report_from_a_small_run() {
    let dir = scratch("full");
    fake_run(&dir);
    let files = halatafl_report::write_report(&dir, None).unwrap();
    assert_eq!(files.dir, dir.join("report"));
    for name in [
        "strength.png",
        "strength.svg",
        "training.png",
        "training.svg",
        "selfplay.png",
        "selfplay.svg",
        "report.md",
    ] {
        let path = dir.join("report").join(name);
        assert!(files.files.contains(&path), "{name} not listed");
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > 1000, "{name} is only {} bytes", bytes.len());
        if name.ends_with(".png") {
            assert_eq!(&bytes[1..4], b"PNG", "{name}");
        }
        if name.ends_with(".svg") {
            let text = String::from_utf8(bytes).unwrap();
            assert!(text.contains("<svg") && text.contains("<text"), "{name}");
        }
    }
    // No temporary files are left behind.
    for entry in std::fs::read_dir(dir.join("report")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with(".tmp"), "left {name}");
    }
    let md = std::fs::read_to_string(dir.join("report/report.md")).unwrap();
    // Generation 1: the net won game 1 as the foxes and lost game 2 as the
    // geese: 1 of 2 overall, 1.0 as foxes, 0.0 as geese.
    assert!(md.contains("| 1 | 0.500 ["), "{md}");
    assert!(
        md.contains("1.000 [0.207, 1.000] (1 games, +1 =0 -0)"),
        "{md}"
    );
    // Generation 2: the net won both (game 2 won by the geese = the net).
    assert!(
        md.contains("| 2 | 1.000 [0.342, 1.000] (2 games, +2 =0 -0)"),
        "{md}"
    );
    // The last training row's losses and the resign check of generation 2.
    assert!(md.contains("policy 1.6000, value 0.2000"), "{md}");
    assert!(md.contains("1 / 4 = 0.250"), "{md}");
    assert!(md.contains("fewer-than-nine 5, pen-filled 3, threefold 1, resigned 1"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_with_a_suite_gets_its_accuracy_figure_and_table() {
    let dir = scratch("suite");
    fake_run(&dir);
    std::fs::write(
        dir.join("config.toml"),
        "[eval]\nsuite = \"data/suites/classic13.csv\"\n",
    )
    .unwrap();
    let row = |generation: u32, agent: &str, group: &str, errors: usize| AccuracyRow {
        generation,
        agent: agent.into(),
        group: group.into(),
        positions: 40,
        errors,
        error_rate: errors as f64 / 40.0,
        error_lo: errors as f64 / 80.0,
        error_hi: (errors as f64 / 30.0).min(1.0),
        valued: 40,
        value_right: 20,
    };
    let mut rows = Vec::new();
    for g in 1..=2 {
        for agent in ["raw", "search"] {
            let errors = if agent == "raw" { 20 } else { 10 } / g as usize;
            rows.push(row(g, agent, "stage middle", errors));
            rows.push(row(g, agent, "difficulty hard", errors + 2));
            rows.push(row(g, agent, "all", errors));
        }
    }
    write_csv(&dir.join("accuracy.csv"), &rows);
    let files = halatafl_report::write_report(&dir, None).unwrap();
    assert_eq!(files.files.len(), 9, "{:?}", files.files);
    for name in ["accuracy.png", "accuracy.svg"] {
        let bytes = std::fs::read(dir.join("report").join(name)).unwrap();
        assert!(bytes.len() > 1000, "{name}");
    }
    let svg = std::fs::read_to_string(dir.join("report/accuracy.svg")).unwrap();
    assert!(svg.contains("hard positions") && svg.contains("<polyline"));
    let md = std::fs::read_to_string(dir.join("report/report.md")).unwrap();
    assert!(
        md.contains("## Accuracy on `data/suites/classic13.csv`"),
        "{md}"
    );
    // Generation 2: raw 10 of 40, search 5 of 40, hard 12 and 7.
    assert!(
        md.contains("| 2 | 40 | 25.0% [12.5, 33.3] | 12.5% [6.2, 16.7] | 30.0% [15.0, 40.0] | 17.5% [8.8, 23.3] | 12.5% [6.2, 16.7] |"),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fresh_run_and_a_non_run() {
    // A run that has only its config: every figure says so, nothing fails.
    let dir = scratch("fresh");
    std::fs::write(dir.join("config.toml"), "[run]\ngenerations = 1\n").unwrap();
    let files = halatafl_report::write_report(&dir, Some(&dir.join("out"))).unwrap();
    assert_eq!(files.files.len(), 7);
    let md = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(md.contains("No evaluation games yet"));
    assert!(md.contains("No training steps yet"));
    let _ = std::fs::remove_dir_all(&dir);

    let empty = scratch("empty");
    let err = halatafl_report::write_report(&empty, None).unwrap_err();
    assert!(err.to_string().contains("not a run directory"), "{err}");
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn a_damaged_csv_is_an_error_naming_file_and_line() {
    let dir = scratch("garbage");
    fake_run(&dir);
    // One line that is not the header: it used to read as "no rows".
    std::fs::write(dir.join("selfplay.csv"), "\u{0}\u{7f}garbage line\n").unwrap();
    let err = halatafl_report::write_report(&dir, None).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("selfplay.csv, line 1") && text.contains("generation"),
        "{text}"
    );
    // A damaged row names its line (header on line 1, rows from line 2).
    fake_run(&dir);
    let good = std::fs::read_to_string(dir.join("train.csv")).unwrap();
    let mut lines: Vec<&str> = good.lines().collect();
    lines[3] = "1,not a number";
    std::fs::write(dir.join("train.csv"), lines.join("\n")).unwrap();
    let text = halatafl_report::write_report(&dir, None)
        .unwrap_err()
        .to_string();
    assert!(text.contains("train.csv, line 4"), "{text}");
    // An empty file is a stage with no rows yet, not an error.
    fake_run(&dir);
    std::fs::write(dir.join("selfplay.csv"), "").unwrap();
    halatafl_report::write_report(&dir, None).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
