//! Agent spec strings: parsing, and building every network-free agent kind
//! from what parses. Specs are checked, never used to search, so a spec
//! that asks for a huge budget is only a value here.
#![no_main]
use halatafl_agent::AgentSpec;
use halatafl_alphabeta::AlphaBeta;
use halatafl_mcts::MctsAgent;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(spec) = AgentSpec::parse(text, "") else {
        return;
    };
    let printed = spec.to_string();
    let again = AgentSpec::parse(&printed, "").expect("a printed spec parses");
    assert_eq!(again, spec, "{printed}");
    match spec.kind.as_str() {
        "alphabeta" => {
            // The transposition table is the one allocation a spec sizes;
            // keep the fuzzer's memory to small tables.
            if spec.get::<usize>("tt").ok().flatten().is_some_and(|mb| mb > 64) {
                return;
            }
            let _ = AlphaBeta::from_spec(&spec, 1);
        }
        "mcts" => {
            let _ = MctsAgent::from_spec(&spec, 1);
        }
        _ => {}
    }
});
