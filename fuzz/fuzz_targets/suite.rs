//! Solved-suite files (`accuracy --suite`): reading any bytes never panics,
//! and every position accepted has a move to make and keeping moves that
//! are legal there.
#![no_main]
use halatafl_rules::Game;
use halatafl_solver::suite::parse_suite;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(entries) = parse_suite("fuzz.csv", data) else {
        return;
    };
    for entry in entries {
        assert!(Game::new(entry.position).outcome().is_none());
        let legal = entry.position.legal_moves();
        assert!(!entry.keeping.is_empty());
        assert!(entry.keeping.iter().all(|m| legal.contains(m)));
    }
});
