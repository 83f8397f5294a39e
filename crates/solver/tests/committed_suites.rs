//! The committed suites under `data/suites/` are re-derived in part by a
//! method independent of the one that built them, so a wrong set fails the
//! tests: the classic sets come from the retrograde tables, and a seeded
//! sample of their rows is solved again, every legal move of each, by the
//! DAG search (no sideways steps) or the df-pn search (with them).

use halatafl_rules::Position;
use halatafl_solver::suite::{read_suite, SuiteEntry};
use halatafl_solver::{DagConfig, DagSolver, Value};
use std::path::PathBuf;

fn suite_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/suites")
        .join(name)
}

/// `count` rows of `stage`, drawn with a fixed seed (the same rows every
/// run, spread over the file).
fn sample<'a>(entries: &'a [SuiteEntry], stage: &str, count: usize) -> Vec<&'a SuiteEntry> {
    let rows: Vec<&SuiteEntry> = entries.iter().filter(|e| e.row.stage == stage).collect();
    let mut state = 0x5EED_2029_u64;
    let mut picked = Vec::new();
    while picked.len() < count.min(rows.len()) {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let row = rows[((state >> 33) % rows.len() as u64) as usize];
        if !picked.iter().any(|p: &&SuiteEntry| p.line == row.line) {
            picked.push(row);
        }
    }
    picked
}

/// Solves every move of sampled rows again with `solve` (which may give
/// up: `None`), trying rows of the end stage, then of the middle, in a
/// seeded order until `want` rows are checked whole; every value decided
/// must be the row's. Returns (rows checked whole, moves decided, rows
/// skipped with a move undecided).
fn recheck(
    entries: &[SuiteEntry],
    want: usize,
    mut solve: impl FnMut(&Position) -> Option<Value>,
) -> (usize, usize, usize) {
    let (mut rows_checked, mut moves_checked, mut skipped) = (0, 0, 0);
    for entry in sample(entries, "end", 3 * want)
        .into_iter()
        .chain(sample(entries, "middle", want))
    {
        if rows_checked == want {
            break;
        }
        let mut decided = 0;
        for &(m, value) in &entry.move_values {
            let mut child = entry.position;
            child.play_unchecked(m);
            let Some(solved) = solve(&child) else {
                continue;
            };
            assert_eq!(
                solved, value,
                "line {}: {} after {m}",
                entry.line, entry.row.fen
            );
            decided += 1;
        }
        moves_checked += decided;
        if decided == entry.move_values.len() {
            rows_checked += 1;
        } else {
            skipped += 1;
        }
    }
    eprintln!("{rows_checked} rows checked whole, {moves_checked} moves decided, {skipped} rows with a move undecided");
    (rows_checked, moves_checked, skipped)
}

/// What every row of a classic set must be: all moves valued, a stage and
/// a difficulty, a move that loses value (a position without one tests
/// nothing); and the set has both sides to move and at least 1,000 rows.
fn check_shape(entries: &[SuiteEntry], values: &[&str]) {
    assert!(entries.len() >= 1000, "{} positions", entries.len());
    for e in entries {
        assert_eq!(e.move_values.len(), e.row.legal_moves, "line {}", e.line);
        assert!(e.keeping.len() < e.row.legal_moves, "line {}", e.line);
        assert!(!e.row.stage.is_empty() && !e.row.difficulty.is_empty());
    }
    for word in [" f ", " g "] {
        assert!(entries.iter().any(|e| e.row.fen.contains(word)), "{word}");
    }
    for value in values {
        assert!(entries.iter().any(|e| e.row.value == *value), "{value}");
    }
}

#[test]
fn the_classic_set_without_sideways_steps_agrees_with_the_dag_search() {
    let entries = read_suite(&suite_path("classic13.csv")).unwrap();
    check_shape(&entries, &["foxes", "geese"]);
    // The DAG search decides some rows in a fraction of a second and needs
    // hundreds of millions of positions for others (the tables are what
    // made the game solvable): rows with a move it leaves undecided within
    // the budget are skipped.
    let mut solver = DagSolver::new(DagConfig {
        budget_nodes: 2_000_000,
        tt_mib: 256,
    })
    .unwrap();
    let (rows, _, skipped) = recheck(&entries, 8, |p| {
        solver.solve(p).unwrap().winner.map(Value::Win)
    });
    assert!(rows >= 6, "{rows} rows checked whole ({skipped} skipped)");
}
