//! A whole engine-protocol session as input: every line answers or errs,
//! nothing panics. The agent is `random`, so `go` costs nothing whatever
//! limits the input asks for, and searches run inline (`run_script`).
#![no_main]
use halatafl_cli::agents::build_agent;
use halatafl_cli::protocol::{run_script, Engine};
use halatafl_rules::Variant;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let factory =
        |spec: &str, seed: u64, variant| build_agent(spec, seed, variant).map_err(|e| e.to_string());
    let mut engine = Engine::new("random", 1, Variant::two_foxes(), &factory).expect("random builds");
    let replies = run_script(&mut engine, data);
    for reply in replies {
        assert!(!reply.contains('\n'), "{reply:?}");
    }
});
