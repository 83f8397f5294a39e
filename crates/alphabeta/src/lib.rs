//! The alpha-beta baseline every learned agent is measured against.
//!
//! A strong, honest opponent: negamax alpha-beta with PVS, iterative
//! deepening, a Zobrist-keyed transposition table, table-move / capture /
//! killer / history move ordering, a capture quiescence, the repetition and
//! fifty-move draws seen inside the tree, mate-distance scores, and a
//! documented hand-made evaluation ([`eval`]). Both variants are searched by
//! the same code: the position's [`halatafl_rules::Variant`] decides the end
//! rules (the classic game has no pen and the fox wins below four geese).
//!
//! Spec strings (see [`AlphaBeta::from_spec`]):
//! `alphabeta` (depth 6), `alphabeta:depth=6`, `alphabeta:ms=200`,
//! `alphabeta:depth=8,ms=500` (whichever comes first), `tt=MiB`.
//!
//! ```
//! use halatafl_agent::{Agent, AgentSpec, Budget};
//! use halatafl_alphabeta::AlphaBeta;
//! use halatafl_rules::{Game, Variant};
//! let spec = AgentSpec::parse("alphabeta:depth=3,tt=1", "").unwrap();
//! let mut agent = AlphaBeta::from_spec(&spec, 7).unwrap();
//! let game = Game::start_of(Variant::two_foxes());
//! let decision = agent.choose(&game, &Budget::default());
//! assert!(game.position().is_legal(decision.mv));
//! assert_eq!(decision.info.depth, 3);
//! ```

#![warn(missing_docs)]

pub mod eval;
pub mod search;
pub mod tt;

pub use eval::{evaluate, EvalWeights};
pub use search::{mate_distance, Limits, SearchConfig, SearchResult, Searcher, MATE};

use halatafl_agent::{Agent, AgentSpec, Budget, Decision, SearchInfo, SpecError, MAX_MOVETIME_MS};
use halatafl_rules::Game;
use std::time::Duration;

/// The deepest search a spec or a budget may ask for, in plies. The search
/// tree stops at [`search::MAX_PLY`] anyway; beyond 100 plies a search
/// would not end in any useful time.
pub const MAX_DEPTH: u32 = 100;

/// The alpha-beta agent: a [`Searcher`] plus the limits its spec gave.
pub struct AlphaBeta {
    spec: String,
    limits: Limits,
    searcher: Searcher,
}

impl AlphaBeta {
    /// Options of the `alphabeta` spec kind.
    pub const OPTIONS: &'static [&'static str] = &["depth", "ms", "tt"];

    /// An agent searching with `config` under `limits`. Its spec string is
    /// made from the limits (`alphabeta:depth=D,ms=T`), so a CSV row names
    /// what was searched; the table size is not in it.
    pub fn new(config: SearchConfig, limits: Limits, seed: u64) -> AlphaBeta {
        let mut spec = String::from("alphabeta");
        let mut sep = ':';
        if let Some(d) = limits.depth {
            spec.push_str(&format!("{sep}depth={d}"));
            sep = ',';
        }
        if let Some(t) = limits.movetime {
            spec.push_str(&format!("{sep}ms={}", t.as_millis()));
        }
        AlphaBeta {
            spec,
            limits,
            searcher: Searcher::new(config, seed),
        }
    }

    /// Builds the agent from `alphabeta[:depth=D][,ms=T][,tt=MiB]`: `depth`
    /// 1..=[`MAX_DEPTH`] plies, `ms` a time per move in milliseconds, at most
    /// [`MAX_MOVETIME_MS`] (iterative deepening until it runs out), `tt` the
    /// table size (1..=4096 MiB, default 16). With neither depth nor ms the
    /// depth is 6.
    pub fn from_spec(spec: &AgentSpec, seed: u64) -> Result<AlphaBeta, SpecError> {
        spec.check_keys(Self::OPTIONS)?;
        let bad = |key: &str, why: &str| SpecError::BadValue {
            spec: spec.to_string(),
            key: key.to_string(),
            value: spec.params[key].clone(),
            why: why.to_string(),
        };
        let depth: Option<u32> = spec.get("depth")?;
        if depth.is_some_and(|d| !(1..=MAX_DEPTH).contains(&d)) {
            return Err(bad(
                "depth",
                &format!("the depth must be from 1 to {MAX_DEPTH} plies"),
            ));
        }
        let ms: Option<u64> = spec.get("ms")?;
        if ms.is_some_and(|ms| !(1..=MAX_MOVETIME_MS).contains(&ms)) {
            return Err(bad(
                "ms",
                &format!("the time per move must be from 1 to {MAX_MOVETIME_MS} ms (one day)"),
            ));
        }
        let mut config = SearchConfig::default();
        if let Some(mb) = spec.get::<usize>("tt")? {
            if !(1..=4096).contains(&mb) {
                return Err(bad("tt", "the table size must be from 1 to 4096 MiB"));
            }
            config.tt_megabytes = mb;
        }
        let limits = Limits {
            depth,
            movetime: ms.map(Duration::from_millis),
            stop: None,
        };
        let mut agent = AlphaBeta::new(config, limits, seed);
        agent.spec = spec.to_string();
        Ok(agent)
    }

    /// Searches with explicit limits (tests, benchmarks, analysis).
    pub fn search(&mut self, game: &Game, limits: &Limits) -> SearchResult {
        self.searcher.search(game, limits)
    }

    /// The limits for one move: the budget's fields override the spec's;
    /// the stop signal is the budget's.
    pub fn limits_for(&self, budget: &Budget) -> Limits {
        Limits {
            depth: budget.depth.or(self.limits.depth),
            movetime: budget.movetime.or(self.limits.movetime),
            stop: budget.stop.clone(),
        }
    }

    /// Maps a score to an expected result in [-1, 1]: ±1 for proved wins and
    /// losses, `tanh(score / value_scale)` otherwise.
    pub fn score_to_value(&self, score: i32) -> f32 {
        match mate_distance(score) {
            Some(d) if d > 0 => 1.0,
            Some(_) => -1.0,
            None => (score as f32 / self.searcher.config.value_scale).tanh(),
        }
    }
}

impl Agent for AlphaBeta {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn choose(&mut self, game: &Game, budget: &Budget) -> Decision {
        let limits = self.limits_for(budget);
        let result = self.searcher.search(game, &limits);
        let extra = match mate_distance(result.score) {
            Some(d) => format!("mate {d}"),
            None => format!("score {}", result.score),
        };
        Decision {
            mv: result.best,
            value: Some(self.score_to_value(result.score)),
            info: SearchInfo {
                depth: result.depth,
                nodes: result.nodes,
                pv: result.pv,
                extra,
            },
        }
    }

    fn new_game(&mut self, seed: u64) {
        self.searcher.new_game(seed);
    }
}
