//! The position parser on any text, in every variant: it returns a position
//! or an error, never panics, and a parsed position prints back to a string
//! that parses to the same position.
#![no_main]
use halatafl_rules::{Position, Variant};
use libfuzzer_sys::fuzz_target;

const VARIANTS: &[&str] = &[
    "two-foxes",
    "two-foxes corner-links",
    "classic geese=13",
    "classic geese=15 sideways",
    "classic geese=17",
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for name in VARIANTS {
        let variant: Variant = name.parse().expect("a listed variant");
        if let Ok(position) = Position::from_fen(text, variant) {
            let printed = position.to_string();
            let again = Position::from_fen(&printed, variant).expect("a printed position parses");
            assert_eq!(again, position, "{printed}");
            let _ = position.legal_moves();
            let _ = position.outcome_without_history();
        }
    }
});
