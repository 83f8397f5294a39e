//! Exact values of classic Fox and Geese from the retrograde tables
//! (`crates/solver`, docs/solver.md), built on demand when the server runs
//! with `--tables`. Tables of up to `k` geese answer every position with
//! at most `k` geese (captures only lower the count), so a classic position
//! asked about starts, on a thread of its own, the build of its variant's
//! tables up to its own number of geese: seconds for an endgame, about 4
//! minutes and 3.6 GiB for 13 geese without sideways steps on 2 cores
//! (with sideways steps about 30 minutes and 12 GiB). Every position the
//! tables cover is then answered at once, each legal move with the value it
//! leads to. A build that would not fit in memory is refused by the
//! solver, and the page says so.

use crate::line::MoveView;
use halatafl_rules::{Position, Variant, VariantKind};
use halatafl_solver::suite::ExactValues;
use halatafl_solver::{RetroConfig, RetroError, RetroTables, SidewaysTables};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

type Tables = dyn ExactValues<Error = RetroError> + Send + Sync;

enum State {
    Building { layers_done: u32, of: u32 },
    Ready(Arc<Tables>),
    Failed(String),
}

/// The tables of every classic variant asked for, built once each.
#[derive(Clone)]
pub struct ClassicTables {
    enabled: bool,
    memory_limit_mib: Option<u64>,
    /// By variant and the most geese the tables hold.
    states: Arc<Mutex<HashMap<(Variant, u32), State>>>,
}

/// What the tables say of a position.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum TableAnswer {
    /// Not a classic position, or the server runs without `--tables`.
    Unavailable {
        /// Why.
        why: String,
    },
    /// The build runs.
    Building {
        /// Layers (goose counts) built.
        layers_done: u32,
        /// Layers in all.
        of: u32,
    },
    /// The exact value.
    Solved {
        /// `foxes`, `geese` or `draw`.
        value: &'static str,
        /// Every legal move with the value it leads to.
        moves: Vec<TableMove>,
    },
    /// The build failed, or the tables cannot answer this position.
    Failed {
        /// Why.
        why: String,
    },
}

/// A move with its exact value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableMove {
    /// The move.
    #[serde(flatten)]
    pub mv: MoveView,
    /// `foxes`, `geese` or `draw`: the value after it.
    pub value: &'static str,
}

impl ClassicTables {
    /// Tables that are built when asked for (`enabled`), within
    /// `memory_limit_mib` (`None`: the memory available).
    pub fn new(enabled: bool, memory_limit_mib: Option<u64>) -> ClassicTables {
        ClassicTables {
            enabled,
            memory_limit_mib,
            states: Arc::default(),
        }
    }

    /// The answer for `position`, starting the build of its tables if needed.
    pub fn answer(&self, position: &Position) -> TableAnswer {
        let variant = position.variant();
        if variant.kind != VariantKind::Classic {
            return TableAnswer::Unavailable {
                why: "the tables are for classic Fox and Geese; Two Foxes is not solved".into(),
            };
        }
        if !self.enabled {
            return TableAnswer::Unavailable {
                why: "start the server with --tables to build the classic tables".into(),
            };
        }
        let need = position.geese().count().max(4);
        let mut states = self.states.lock().expect("tables lock");
        // Tables of as many geese or more answer this position.
        let covering = || {
            states
                .iter()
                .filter(move |((v, most), _)| *v == variant && *most >= need)
                .map(|(_, state)| state)
        };
        let ready = covering().find_map(|state| match state {
            State::Ready(t) => Some(t.clone()),
            _ => None,
        });
        let Some(tables) = ready else {
            let building = covering().find_map(|state| match state {
                State::Building { layers_done, of } => Some((*layers_done, *of)),
                _ => None,
            });
            if let Some((layers_done, of)) = building {
                return TableAnswer::Building { layers_done, of };
            }
            if let Some(State::Failed(why)) = states.get(&(variant, need)) {
                return TableAnswer::Failed { why: why.clone() };
            }
            let of = need - 3;
            states.insert((variant, need), State::Building { layers_done: 0, of });
            self.start_build(variant, need);
            return TableAnswer::Building { layers_done: 0, of };
        };
        drop(states);
        let value = match tables.exact_value(position) {
            Ok(v) => v,
            Err(e) => return TableAnswer::Failed { why: e.to_string() },
        };
        let moves = match tables.exact_move_values(position) {
            Ok(moves) => moves
                .into_iter()
                .map(|(m, v)| TableMove {
                    mv: MoveView::of(m),
                    value: v.word(),
                })
                .collect(),
            Err(e) => return TableAnswer::Failed { why: e.to_string() },
        };
        TableAnswer::Solved {
            value: value.word(),
            moves,
        }
    }

    fn start_build(&self, variant: Variant, geese: u32) {
        let states = self.states.clone();
        let config = RetroConfig {
            memory_limit_mib: self.memory_limit_mib,
            ..RetroConfig::default()
        };
        std::thread::spawn(move || {
            let progress = |done: u32| {
                if let Some(State::Building { layers_done, .. }) = states
                    .lock()
                    .expect("tables lock")
                    .get_mut(&(variant, geese))
                {
                    *layers_done = done;
                }
            };
            let mut done = 0;
            let built: Result<Arc<Tables>, RetroError> = if variant.sideways {
                SidewaysTables::build(geese, variant.corner_links, &config, |_, _| {
                    done += 1;
                    progress(done);
                })
                .map(|t| Arc::new(t) as Arc<Tables>)
            } else {
                RetroTables::build(geese, variant.corner_links, &config, |_| {
                    done += 1;
                    progress(done);
                })
                .map(|t| Arc::new(t) as Arc<Tables>)
            };
            let state = match built {
                Ok(t) => State::Ready(t),
                Err(e) => State::Failed(format!(
                    "the tables of {variant} up to {geese} geese were not built: {e}"
                )),
            };
            states
                .lock()
                .expect("tables lock")
                .insert((variant, geese), state);
        });
    }
}
