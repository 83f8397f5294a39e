//! Game CSVs (`summary`, `solve --from-games`, `replay`): reading any bytes
//! never panics, and every row accepted passes the checks a reader makes
//! (a result, an end reason and a variant halatafl writes, finite times).
#![no_main]
use halatafl_arena::parse_game_rows;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(rows) = parse_game_rows("fuzz.csv", data) else {
        return;
    };
    for row in rows {
        assert!(row.check().is_ok());
        assert!(row.foxes_seconds.is_finite() && row.geese_seconds.is_finite());
        // What summary and solve do with an accepted row.
        let _ = row.moves_by(halatafl_rules::Side::Foxes);
        let _ = row.moves_by(halatafl_rules::Side::Geese);
    }
});
