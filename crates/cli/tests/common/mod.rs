//! Helpers shared by the CLI's integration tests (each test file is its own
//! crate, so not every helper is used by every file).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `halatafl` binary built for these tests.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_halatafl")
}

/// The workspace root (for `configs/`).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `halatafl ARGS`, run to its end.
pub fn halatafl(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs a command that must succeed and returns its standard output.
pub fn succeeds(args: &[&str]) -> String {
    let out = halatafl(args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "halatafl {args:?} failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Runs a command that must fail cleanly (exit code 1, not a panic's 101)
/// and returns its standard error.
pub fn fails(args: &[&str]) -> String {
    let out = halatafl(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "halatafl {args:?} should exit 1; stderr: {err}"
    );
    assert!(
        !err.contains("panicked"),
        "halatafl {args:?} panicked: {err}"
    );
    err
}

/// An empty scratch directory named after the test and this process.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("halatafl-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `halatafl train --config CONFIG --run RUN`, which must succeed.
pub fn train_new_run(config: &Path, run: &Path) -> Output {
    train_new_run_with(config, run, &[])
}

/// `halatafl train FLAGS --config CONFIG --run RUN`, which must succeed.
pub fn train_new_run_with(config: &Path, run: &Path, flags: &[&str]) -> Output {
    let out = Command::new(bin())
        .arg("train")
        .args(flags)
        .arg("--config")
        .arg(config)
        .arg("--run")
        .arg(run)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "train failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every row of a CSV file as column -> value.
pub fn read_csv(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}
