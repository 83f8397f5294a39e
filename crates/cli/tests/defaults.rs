//! The defaults the help text states are the ones the code uses: each
//! default lives in one `Default` impl, and text that quotes it is checked
//! against it here rather than trusted to stay in step.

use halatafl_cli::agents::AGENT_FORMS;
use halatafl_mcts::MctsConfig;
use halatafl_train::config::SearchSection;

#[test]
fn the_agent_forms_state_the_search_defaults() {
    let mcts = MctsConfig::default();
    assert!(
        AGENT_FORMS.contains(&format!("(1-10000000, default {})", mcts.sims)),
        "{AGENT_FORMS}"
    );
    // An agent built from a bare `mcts` spec searches with those defaults.
    let spec = halatafl_agent::AgentSpec::parse("mcts", "").unwrap();
    assert_eq!(halatafl_mcts::from_spec(&spec, &[]).unwrap().config, mcts);
}

#[test]
fn a_run_config_searches_with_the_self_play_setting_by_default() {
    let s = SearchSection::default();
    let m = MctsConfig::self_play();
    assert_eq!(
        (
            s.simulations,
            s.gumbel_m,
            s.temperature_plies,
            s.c_puct,
            s.fpu_reduction
        ),
        (
            m.sims,
            m.gumbel_m,
            m.temperature_plies,
            m.cpuct,
            m.fpu_reduction
        )
    );
    assert_eq!(s.algorithm, "puct");
}
