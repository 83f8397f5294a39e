//! The committed suites under `data/suites/` are re-derived in part by a
//! method independent of the one that built them, so a wrong set fails the
//! tests: the classic sets come from the retrograde tables, and a seeded
//! sample of their rows is solved again, every legal move of each, by the
//! DAG search (no sideways steps) or the df-pn search (with them, on rows
//! of few geese, where it finishes), and the rows of up to six geese with
//! sideways steps are looked up in small tables built here.

use halatafl_rules::Position;
use halatafl_solver::suite::ExactValues;
use halatafl_solver::suite::{read_suite, SuiteEntry};
use halatafl_solver::{
    DagConfig, DagSolver, RetroConfig, SidewaysTables, Solver, SolverConfig, Value,
};
use std::path::PathBuf;

fn suite_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/suites")
        .join(name)
}

/// Solves every move of rows of `pool`, taken in a seeded order, again with
/// `solve` (which may give up: `None`), until `want` rows are checked whole
/// or `tries` rows were tried; every value decided must be the row's.
/// Returns (rows checked whole, moves decided, rows skipped with a move
/// undecided).
fn recheck(
    pool: &[&SuiteEntry],
    want: usize,
    tries: usize,
    mut solve: impl FnMut(&Position) -> Option<Value>,
) -> (usize, usize, usize) {
    let (mut rows_checked, mut moves_checked, mut skipped) = (0, 0, 0);
    let mut state = 0x5EED_2029_u64;
    let mut tried = Vec::new();
    while rows_checked < want && tried.len() < tries.min(pool.len()) {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let k = ((state >> 33) % pool.len() as u64) as usize;
        if tried.contains(&k) {
            continue;
        }
        tried.push(k);
        let entry = pool[k];
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
/// nothing); and the set has both sides to move, every value in `values`,
/// and at least `min_rows` rows.
fn check_shape(entries: &[SuiteEntry], values: &[&str], min_rows: usize) {
    assert!(entries.len() >= min_rows, "{} positions", entries.len());
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
    check_shape(&entries, &["foxes", "geese"], 1000);
    recheck_late_rows_by_dag(&entries);
}

#[test]
fn the_held_out_classic_set_shares_no_position_and_agrees_with_the_dag_search() {
    // Every critical position of its games not in classic13.csv: 1,310.
    check_held_out("classic13-heldout.csv", &["classic13.csv"]);
}

#[test]
fn the_third_classic_set_shares_no_position_and_agrees_with_the_dag_search() {
    check_held_out(
        "classic13-third.csv",
        &["classic13.csv", "classic13-heldout.csv"],
    );
}

#[test]
fn the_fourth_classic_set_shares_no_position_and_agrees_with_the_dag_search() {
    check_held_out(
        "classic13-fourth.csv",
        &[
            "classic13.csv",
            "classic13-heldout.csv",
            "classic13-third.csv",
        ],
    );
}

/// A set built from new games with `--exclude`: the shape of a classic
/// set, no position of the `earlier` sets (a network picked on those is
/// judged afresh on it), and values the DAG search agrees with.
fn check_held_out(name: &str, earlier: &[&str]) {
    let entries = read_suite(&suite_path(name)).unwrap();
    check_shape(&entries, &["foxes", "geese"], 1000);
    for earlier in earlier {
        let seen: std::collections::HashSet<String> = read_suite(&suite_path(earlier))
            .unwrap()
            .iter()
            .map(|e| e.position.fen())
            .collect();
        for e in &entries {
            assert!(
                !seen.contains(&e.position.fen()),
                "{name} line {}: {} is in {earlier}",
                e.line,
                e.row.fen
            );
        }
    }
    recheck_late_rows_by_dag(&entries);
}

/// A seeded sample of a no-sideways set's end-stage rows, every move of
/// each solved again by the DAG search.
fn recheck_late_rows_by_dag(entries: &[SuiteEntry]) {
    // The DAG search decides some rows in a fraction of a second and needs
    // hundreds of millions of positions for others (the tables are what
    // made the game solvable): late rows are tried, and those with a move it
    // leaves undecided within the budget are skipped.
    let late: Vec<&SuiteEntry> = entries.iter().filter(|e| e.row.stage == "end").collect();
    let mut solver = DagSolver::new(DagConfig {
        budget_nodes: 2_000_000,
        tt_mib: 256,
    })
    .unwrap();
    let (rows, _, skipped) = recheck(&late, 8, 40, |p| {
        solver.solve(p).unwrap().winner.map(Value::Win)
    });
    assert!(rows >= 6, "{rows} rows checked whole ({skipped} skipped)");
}

#[test]
fn the_classic_set_with_sideways_steps_agrees_with_proof_number_search_and_small_tables() {
    let entries = read_suite(&suite_path("classic13s.csv")).unwrap();
    check_shape(&entries, &["foxes", "geese", "draw"], 1000);
    let few: Vec<&SuiteEntry> = entries
        .iter()
        .filter(|e| e.position.geese().count() <= 6)
        .collect();
    assert!(few.len() >= 50, "{} rows of up to six geese", few.len());
    // Tables of up to six geese, built here: every such row's value and
    // move values, read again.
    let tables = SidewaysTables::build(
        6,
        false,
        &RetroConfig {
            threads: 2,
            memory_limit_mib: None,
            layers_dir: None,
        },
        |_, _| {},
    )
    .unwrap();
    for e in &few {
        assert_eq!(
            tables.exact_value(&e.position).unwrap(),
            e.value,
            "line {}",
            e.line
        );
        assert_eq!(
            tables.exact_move_values(&e.position).unwrap(),
            e.move_values,
            "line {}",
            e.line
        );
    }
    // Proof-number search, which shares nothing with the tables but the
    // rules engine, on a sample of them: it proves wins within the budget
    // but rarely a draw (both searches must fail), so moves, not whole
    // rows, are counted; every value it decides must be the row's.
    let mut solver = Solver::new(SolverConfig {
        budget_nodes: 200_000,
        tt_mib: 128,
        ..SolverConfig::default()
    })
    .unwrap();
    let (_, moves, _) = recheck(&few, usize::MAX, 40, |p| solver.solve(p).value);
    assert!(moves >= 80, "{moves} moves decided");
}

/// The Two Foxes critical set was built by df-pn with the distance start;
/// a seeded sample of its rows is solved again with plain df-pn (the
/// mobility start, another search order) on a fresh table: each row's
/// value, every keeping move's value, and a move outside them that gives
/// the value away, so a row that is not critical, or not exact, fails.
#[test]
fn the_two_foxes_critical_set_holds_again_under_plain_df_pn() {
    let entries = read_suite(&suite_path("two-foxes-critical.csv")).unwrap();
    assert!(entries.len() >= 500, "{} rows", entries.len());
    for e in &entries {
        let legal = e.position.legal_moves().len();
        assert!(
            !e.keeping.is_empty() && e.keeping.len() < legal,
            "line {}: not critical",
            e.line
        );
    }
    let mut solver = Solver::new(SolverConfig {
        budget_nodes: 1_000_000,
        tt_mib: 128,
        init: halatafl_solver::LeafInit::Mobility,
        ..SolverConfig::default()
    })
    .unwrap();
    let (mut checked, mut state) = (0, 0x2029_u64);
    let mut tried = 0;
    while checked < 25 && tried < 120 {
        tried += 1;
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let e = &entries[((state >> 33) % entries.len() as u64) as usize];
        let Some(value) = solver.solve(&e.position).value else {
            continue;
        };
        assert_eq!(value, e.value, "line {}", e.line);
        let mut decided_all = true;
        let mut gave_away = false;
        for m in e.position.legal_moves() {
            let mut child = e.position;
            child.play_unchecked(m);
            let Some(v) = solver.solve(&child).value else {
                decided_all = false;
                continue;
            };
            if e.keeping.contains(&m) {
                assert_eq!(v, e.value, "line {}: keeping move {m}", e.line);
            } else {
                assert_ne!(v, e.value, "line {}: move {m} keeps the value", e.line);
                gave_away = true;
            }
        }
        if decided_all {
            assert!(gave_away, "line {}", e.line);
            checked += 1;
        }
    }
    assert!(
        checked >= 25,
        "{checked} rows re-derived whole of {tried} tried"
    );
}
