//! Which agents the page may play against, and within which budget. Any
//! spec of the built-in kinds is taken (random, alpha-beta, MCTS, the
//! shipped network); a `net:ckpt=` spec only for a checkpoint the server
//! was given (`--agent`, or a run's `checkpoints/`), so a request cannot
//! make the server open a file it was not pointed at. Time, simulations,
//! depth and table size are bounded by the server's settings.

use crate::analysis::NetChoice;
use crate::config::BoardConfig;
use halatafl_agent::AgentSpec;
use halatafl_program::agents::AGENT_FORMS;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Most MiB of an alpha-beta table one request may ask for.
pub const MAX_TT_MIB: u64 = 256;

/// Refuses `key=value` outside `min..=max`, naming the server's bound
/// `flag`: the one check of every budget a request may ask for.
pub fn within(key: &str, value: u64, min: u64, max: u64, flag: &str) -> Result<(), String> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(format!("{key}={value}: expected {min} to {max} ({flag})"))
    }
}

/// The checkpoints and bounds the server plays with.
#[derive(Clone, Debug)]
pub struct Players {
    /// Canonical paths of the checkpoints the server may load.
    checkpoints: BTreeSet<PathBuf>,
    /// The specs the page offers, first the ones given.
    pub offered: Vec<String>,
    /// The networks the page offers for analysis (`best` first).
    pub networks: Vec<NetChoice>,
    max_ms: u64,
    max_sims: u32,
    max_depth: u32,
}

impl Players {
    /// The players of `config`: its `--agent` specs (each checked now, so
    /// a bad one stops the server at start with its reason) and its runs'
    /// checkpoints.
    pub fn new(config: &BoardConfig) -> Result<Players, String> {
        let mut checkpoints = BTreeSet::new();
        let mut networks = vec![NetChoice::Shipped];
        for run in &config.runs {
            let dir = run.join("checkpoints");
            if let Ok(entries) = std::fs::read_dir(&dir) {
                let mut found: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
                    .collect();
                found.sort();
                for path in found {
                    if let Ok(canonical) = path.canonicalize() {
                        checkpoints.insert(canonical);
                        networks.push(NetChoice::File(path));
                    }
                }
            }
        }
        for spec in &config.agents {
            let parsed = AgentSpec::parse(spec, AGENT_FORMS).map_err(|e| format!("--agent {e}"))?;
            if parsed.kind == "net" {
                let ckpt: String = parsed
                    .get("ckpt")
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| format!("--agent {spec}: `net` needs `ckpt=PATH`"))?;
                let path = Path::new(&ckpt);
                let canonical = path
                    .canonicalize()
                    .map_err(|e| format!("--agent {spec}: checkpoint {ckpt}: {e}"))?;
                if checkpoints.insert(canonical) {
                    networks.push(NetChoice::File(path.to_path_buf()));
                }
            }
        }
        let players = Players {
            checkpoints,
            offered: Vec::new(),
            networks,
            max_ms: config.max_movetime.as_millis() as u64,
            max_sims: config.max_sims,
            max_depth: config.max_depth,
        };
        for spec in &config.agents {
            players
                .check(spec)
                .map_err(|e| format!("--agent {spec}: {e}"))?;
        }
        let mut offered = config.agents.clone();
        for default in ["best:ms=500", "alphabeta:ms=500", "mcts:ms=500", "random"] {
            if !offered.iter().any(|s| s == default) {
                offered.push(default.to_string());
            }
        }
        Ok(Players { offered, ..players })
    }

    /// Checks `spec` against the server's bounds and checkpoints; the
    /// agent is then built by the one builder of every program
    /// (`halatafl_program::agents`), which checks the rest.
    pub fn check(&self, spec: &str) -> Result<(), String> {
        let parsed = AgentSpec::parse(spec, AGENT_FORMS).map_err(|e| e.to_string())?;
        if !["random", "alphabeta", "mcts", "net", "best"].contains(&parsed.kind.as_str()) {
            return Err(parsed.unknown_kind(AGENT_FORMS).to_string());
        }
        let number = |key: &str| -> Result<Option<u64>, String> {
            parsed.get::<u64>(key).map_err(|e| e.to_string())
        };
        // `sims=0` is a network's raw policy.
        for (key, min, max, flag) in [
            ("ms", 1, self.max_ms, "--max-ms"),
            ("sims", 0, u64::from(self.max_sims), "--max-sims"),
            ("depth", 1, u64::from(self.max_depth), "--max-depth"),
            ("tt", 1, MAX_TT_MIB, "the board's table cap"),
        ] {
            if let Some(value) = number(key)? {
                within(key, value, min, max, flag)?;
            }
        }
        if parsed.kind == "net" {
            let ckpt: Option<String> = parsed.get("ckpt").map_err(|e| e.to_string())?;
            let ckpt = ckpt.ok_or("`net` needs `ckpt=PATH`")?;
            self.checkpoint(&ckpt)?;
        }
        Ok(())
    }

    /// The network a spec names for analysis (`best` or `net:ckpt=PATH` of
    /// a checkpoint the server was given).
    pub fn network(&self, spec: &str) -> Result<NetChoice, String> {
        if spec == "best" {
            return Ok(NetChoice::Shipped);
        }
        let ckpt = spec.strip_prefix("net:ckpt=").ok_or_else(|| {
            format!("network `{spec}`: expected `best` or `net:ckpt=PATH` of a checkpoint given to the server")
        })?;
        self.checkpoint(ckpt)?;
        Ok(NetChoice::File(PathBuf::from(ckpt)))
    }

    fn checkpoint(&self, ckpt: &str) -> Result<(), String> {
        let known = Path::new(ckpt)
            .canonicalize()
            .is_ok_and(|c| self.checkpoints.contains(&c));
        if known {
            Ok(())
        } else {
            Err(format!(
                "checkpoint `{ckpt}`: this server loads only the checkpoints it was given \
                 (--agent net:ckpt=PATH, or a --run directory's checkpoints/)"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn budgets_and_checkpoints_are_bounded_by_the_server() {
        let config = BoardConfig {
            max_movetime: Duration::from_millis(1000),
            max_sims: 500,
            max_depth: 6,
            ..BoardConfig::default()
        };
        let players = Players::new(&config).unwrap();
        assert!(players.check("alphabeta:ms=1000").is_ok());
        assert!(players
            .check("alphabeta:ms=1001")
            .unwrap_err()
            .contains("--max-ms"));
        assert!(players
            .check("mcts:sims=501")
            .unwrap_err()
            .contains("--max-sims"));
        assert!(players
            .check("alphabeta:depth=7")
            .unwrap_err()
            .contains("--max-depth"));
        assert!(players.check("alphabeta:tt=1024").is_err());
        let err = players.check("net:ckpt=/etc/passwd").unwrap_err();
        assert!(err.contains("only the checkpoints it was given"), "{err}");
        assert!(players.network("net:ckpt=/etc/passwd").is_err());
        assert_eq!(players.network("best").unwrap(), NetChoice::Shipped);
        assert!(players.check("chess").is_err());
        assert_eq!(players.offered[0], "best:ms=500");
        let bad = BoardConfig {
            agents: vec!["alphabeta:ms=5000".into()],
            ..config
        };
        assert!(Players::new(&bad)
            .unwrap_err()
            .starts_with("--agent alphabeta:ms=5000"));
    }
}
