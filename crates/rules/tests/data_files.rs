//! The hand-built cases of `tests/data/perft.txt` and `tests/data/moves.txt`,
//! checked against both the engine and the independent reference generator
//! (`tests/reference/mod.rs`). The file formats are documented in their header
//! comments.

mod reference;

use halatafl_rules::{perft, Position, Variant};
use reference::{Board, Rules};

/// One data line: its number in the file and its `|`-separated fields.
struct Case {
    line: usize,
    fields: Vec<String>,
}

fn data_path(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn read_cases(name: &str, fields: usize) -> Vec<Case> {
    let text = std::fs::read_to_string(data_path(name)).expect("data file is readable");
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<String> = line.split('|').map(|f| f.trim().to_string()).collect();
        assert_eq!(
            parts.len(),
            fields,
            "{name}:{}: expected {fields} fields",
            i + 1
        );
        cases.push(Case {
            line: i + 1,
            fields: parts,
        });
    }
    cases
}

fn engine_position(variant: &str, fen: &str, at: &str) -> Position {
    let variant: Variant = variant
        .parse()
        .unwrap_or_else(|e| panic!("{at}: variant: {e}"));
    Position::from_fen(fen, variant).unwrap_or_else(|e| panic!("{at}: position: {e}"))
}

fn engine_moves(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = p.legal_moves().iter().map(|m| m.to_string()).collect();
    v.sort();
    v
}

fn engine_outcome(p: &Position) -> String {
    p.outcome_without_history()
        .map_or("ongoing".to_string(), |o| o.to_string())
}

fn moves_field(moves: &[String]) -> String {
    if moves.is_empty() {
        "-".to_string()
    } else {
        moves.join(" ")
    }
}

#[test]
fn move_list_cases_match_engine_and_reference() {
    let cases = read_cases("moves.txt", 4);
    assert!(cases.len() >= 20, "moves.txt should hold at least 20 cases");
    for case in &cases {
        let at = format!("moves.txt:{}", case.line);
        let (variant, fen, outcome, moves) = (
            &case.fields[0],
            &case.fields[1],
            &case.fields[2],
            &case.fields[3],
        );
        assert!(
            outcome != "?" && moves != "?",
            "{at}: placeholder left; run the ignored `fill_in_placeholders` test"
        );
        let expected: Vec<&str> = if moves == "-" {
            Vec::new()
        } else {
            moves.split(' ').collect()
        };
        let mut sorted = expected.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(
            sorted, expected,
            "{at}: the moves field must be sorted and unique"
        );

        let engine = engine_position(variant, fen, &at);
        assert_eq!(engine_moves(&engine), expected, "{at}: engine moves");
        assert_eq!(&engine_outcome(&engine), outcome, "{at}: engine outcome");

        let rules = Rules::parse(variant);
        let board = Board::parse(fen);
        assert_eq!(
            reference::move_texts(&rules, &board),
            expected,
            "{at}: reference moves"
        );
        assert_eq!(
            &reference::outcome(&rules, &board),
            outcome,
            "{at}: reference outcome"
        );
    }
}

#[test]
fn perft_cases_match_engine_and_reference() {
    let cases = read_cases("perft.txt", 4);
    assert!(cases.len() >= 20, "perft.txt should hold at least 20 cases");
    for case in &cases {
        let at = format!("perft.txt:{}", case.line);
        let (variant, fen) = (&case.fields[0], &case.fields[1]);
        let depth: u32 = case.fields[2].parse().expect("depth is a number");
        assert!(
            case.fields[3] != "?",
            "{at}: placeholder left; run the ignored `fill_in_placeholders` test"
        );
        let nodes: u64 = case.fields[3].parse().expect("nodes is a number");
        let engine = engine_position(variant, fen, &at);
        assert_eq!(perft(&engine, depth), nodes, "{at}: engine perft");
        let reference = reference::perft(&Rules::parse(variant), &Board::parse(fen), depth);
        assert_eq!(reference, nodes, "{at}: reference perft");
    }
}

/// Rewrites the data files with every `?` replaced by the reference's value,
/// for review before committing. The values come from the reference only, and
/// the normal tests then check them against the engine.
#[test]
#[ignore]
fn fill_in_placeholders() {
    for (name, fields) in [("moves.txt", 4), ("perft.txt", 4)] {
        let path = data_path(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') || !trimmed.contains('?') {
                out.push_str(line);
                out.push('\n');
                continue;
            }
            let mut parts: Vec<String> = trimmed.split('|').map(|f| f.trim().to_string()).collect();
            assert_eq!(parts.len(), fields);
            let rules = Rules::parse(&parts[0]);
            let board = Board::parse(&parts[1]);
            if name == "moves.txt" {
                if parts[2] == "?" {
                    parts[2] = reference::outcome(&rules, &board);
                }
                if parts[3] == "?" {
                    parts[3] = moves_field(&reference::move_texts(&rules, &board));
                }
            } else {
                let depth: u32 = parts[2].parse().unwrap();
                parts[3] = reference::perft(&rules, &board, depth).to_string();
            }
            out.push_str(&parts.join(" | "));
            out.push('\n');
        }
        let tmp = format!("{path}.tmp");
        std::fs::write(&tmp, out).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
    }
}
