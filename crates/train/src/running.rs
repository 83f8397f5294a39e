//! Games left running when a generation has finished its games
//! (`[selfplay] carry_over`, KataGo's continuous self-play): they go on in
//! the next generation under the new network, so a worker's network calls
//! stay full to the end of a generation instead of shrinking as its last
//! games finish.
//!
//! `halatafl train` saves them as `shards/gen_NNNN/running.json` when the
//! generation's self-play ends, before the stage is marked done, and the
//! next generation's self-play reads them: a run killed anywhere and
//! resumed plays exactly the games an uninterrupted one plays. What is
//! saved is what the game's future depends on: its start and moves, its
//! random stream, the samples its full searches have recorded (their
//! positions are found again by replaying the moves, so the file cannot
//! disagree with them) and its resignation bookkeeping. The search tree is
//! not saved: a carried game's next move is searched afresh by the new
//! network, as it would be in memory.

use crate::error::{at, TrainError};
use crate::selfplay::Slot;
use halatafl_dataio::write_atomically;
use halatafl_nn::Sample;
use halatafl_rules::{Game, Position, Side, Variant};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file name of a generation's running games, in its shard folder.
pub const RUNNING_FILE: &str = "running.json";

/// The version of [`RUNNING_FILE`]'s layout written now.
const RUNNING_VERSION: u32 = 1;

/// A game that was still running when its worker finished its share of a
/// generation's games.
#[derive(Clone, Debug)]
pub struct RunningGame {
    /// The worker thread that played it; it goes on on worker
    /// `worker % threads` of the next generation.
    pub worker: usize,
    /// The game so far.
    pub game: Game,
    /// Its sampling state, samples and bookkeeping.
    pub(crate) slot: Slot,
}

impl RunningGame {
    /// Plies played so far.
    pub fn plies(&self) -> usize {
        self.game.ply()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunningFile {
    version: u32,
    /// The generation whose self-play left these games running.
    generation: u32,
    /// The run's variant, as `game.variant` names it.
    variant: String,
    games: Vec<RunningRecord>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunningRecord {
    worker: usize,
    /// The seed the game was begun with.
    seed: u64,
    /// Its start as a position string.
    start: String,
    /// Its moves so far, space-separated.
    moves: String,
    /// Its random stream (full or fast searches, nothing else once begun).
    rng: ChaCha8Rng,
    /// The positions its full searches made samples of, by ply.
    samples: Vec<RunningSample>,
    /// Consecutive own moves below the resign threshold: foxes, geese.
    low: [u32; 2],
    play_out: bool,
    would_resign: Option<String>,
    drawn: bool,
    opponent: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunningSample {
    /// The ply of the sample's position in the game (0: the start).
    ply: u32,
    /// The search's visit distribution over the position's legal moves.
    policy: Vec<f32>,
    /// The search's root value for the side to move.
    search_wdl: [f32; 3],
}

/// Writes `games` as `path` (atomically): the games generation
/// `generation` of a `variant` run left running.
pub fn write_running(
    path: &Path,
    generation: u32,
    variant: Variant,
    games: &[RunningGame],
) -> Result<(), TrainError> {
    let file = RunningFile {
        version: RUNNING_VERSION,
        generation,
        variant: variant.to_string(),
        games: games.iter().map(record).collect(),
    };
    let text = serde_json::to_string(&file).expect("running games serialise");
    write_atomically(path, text.as_bytes()).map_err(at(path))
}

fn record(g: &RunningGame) -> RunningRecord {
    let s = &g.slot;
    RunningRecord {
        worker: g.worker,
        seed: s.seed,
        start: g.game.start_position().fen(),
        moves: g.game.moves_text(),
        rng: s.rng.clone(),
        samples: s
            .pending
            .iter()
            .map(|(sample, search_wdl, _, ply)| RunningSample {
                ply: *ply,
                policy: sample.policy.clone(),
                search_wdl: *search_wdl,
            })
            .collect(),
        low: s.low,
        play_out: s.play_out,
        would_resign: s.would_resign.map(|side| side.name().to_string()),
        drawn: s.drawn,
        opponent: s.opponent.map(|side| side.name().to_string()),
    }
}

/// Reads the games generation `generation` of a `variant` run left running
/// from `path`. Refuses, naming the file (and the game, counted from 1),
/// a file of another generation or variant, a move that is not legal, a
/// sample outside the game or whose policy does not fit its position.
pub fn read_running(
    path: &Path,
    generation: u32,
    variant: Variant,
) -> Result<Vec<RunningGame>, TrainError> {
    let bad = |why: String| TrainError::BadFile {
        path: path.to_path_buf(),
        why,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad(format!(
                "missing: with selfplay.carry_over the self-play of generation {} continues the games generation {generation} left running, and they are not here",
                generation + 1
            )))
        }
        Err(e) => return Err(TrainError::io(path, e)),
    };
    let file: RunningFile =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a running-games file: {e}")))?;
    if file.version != RUNNING_VERSION {
        return Err(bad(format!(
            "version {}, this build reads version {RUNNING_VERSION}",
            file.version
        )));
    }
    if file.generation != generation {
        return Err(bad(format!(
            "holds the games of generation {}, expected {generation}",
            file.generation
        )));
    }
    if file.variant != variant.to_string() {
        return Err(bad(format!(
            "holds {:?} games, the run plays {:?}",
            file.variant,
            variant.to_string()
        )));
    }
    file.games
        .into_iter()
        .enumerate()
        .map(|(i, r)| restore(r, variant).map_err(|why| bad(format!("game {}: {why}", i + 1))))
        .collect()
}

fn side(name: Option<String>, what: &str) -> Result<Option<Side>, String> {
    name.map(|n| n.parse::<Side>().map_err(|e| format!("{what}: {e}")))
        .transpose()
}

/// Replays a record's moves from its start, picking up its samples'
/// positions on the way.
fn restore(r: RunningRecord, variant: Variant) -> Result<RunningGame, String> {
    let start = Position::from_fen(&r.start, variant).map_err(|e| format!("start: {e}"))?;
    let mut game = Game::new(start);
    let mut samples = r.samples.into_iter().peekable();
    let mut pending = Vec::new();
    let mut moves = r.moves.split_whitespace();
    loop {
        let ply = game.ply() as u32;
        if let Some(s) = samples.next_if(|s| s.ply == ply) {
            let position = *game.position();
            let legal = position.legal_moves().len();
            if s.policy.len() != legal {
                return Err(format!(
                    "the sample at ply {ply} has {} policy entries for {legal} legal moves",
                    s.policy.len()
                ));
            }
            let finite = |x: &f32| x.is_finite() && *x >= 0.0;
            if !s.policy.iter().all(finite) || !s.search_wdl.iter().all(finite) {
                return Err(format!(
                    "the sample at ply {ply} has a negative or non-finite number"
                ));
            }
            let sample = Sample {
                position,
                repetitions: game.repetitions().min(255) as u8,
                policy: s.policy,
                wdl: [0.0; 3],
                aux: Default::default(),
            };
            pending.push((sample, s.search_wdl, position.side(), ply));
        }
        let Some(text) = moves.next() else { break };
        if game.outcome().is_some() {
            return Err(format!("the game is over before move {}", ply + 1));
        }
        game.play_str(text)
            .map_err(|e| format!("move {} `{text}`: {e}", ply + 1))?;
    }
    if game.outcome().is_some() {
        return Err("the game is over: a running game has a move to play".into());
    }
    if let Some(s) = samples.next() {
        return Err(format!(
            "a sample at ply {}, out of order or past the game's {} plies",
            s.ply,
            game.ply()
        ));
    }
    let slot = Slot {
        index: 0,
        seed: r.seed,
        rng: r.rng,
        full: false,
        pending,
        low: r.low,
        play_out: r.play_out,
        would_resign: side(r.would_resign, "would_resign")?,
        drawn: r.drawn,
        opponent: side(r.opponent, "opponent")?,
        carried: false,
        first_ply: 0,
    };
    Ok(RunningGame {
        worker: r.worker,
        game,
        slot,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// A game of four plies with samples at plies 1 and 3, as worker 1 left it.
    fn running_game() -> RunningGame {
        let variant = Variant::two_foxes();
        let mut game = Game::start_of(variant);
        let mut pending = Vec::new();
        for ply in 0..4u32 {
            let position = *game.position();
            let moves = position.legal_moves();
            if ply % 2 == 1 {
                let n = moves.len();
                let sample = Sample {
                    position,
                    repetitions: 1,
                    policy: vec![1.0 / n as f32; n],
                    wdl: [0.0; 3],
                    aux: Default::default(),
                };
                pending.push((sample, [0.25, 0.5, 0.25], position.side(), ply));
            }
            game.play(moves[0]).unwrap();
        }
        let slot = Slot {
            index: 3,
            seed: 99,
            rng: ChaCha8Rng::seed_from_u64(5),
            full: true,
            pending,
            low: [0, 2],
            play_out: true,
            would_resign: Some(Side::Foxes),
            drawn: false,
            opponent: Some(Side::Geese),
            carried: false,
            first_ply: 0,
        };
        RunningGame {
            worker: 1,
            game,
            slot,
        }
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("halatafl-running-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn running_games_read_back_as_written() {
        let path = scratch("round-trip.json");
        let g = running_game();
        write_running(&path, 4, Variant::two_foxes(), std::slice::from_ref(&g)).unwrap();
        let read = read_running(&path, 4, Variant::two_foxes()).unwrap();
        assert_eq!(read.len(), 1);
        let r = &read[0];
        assert_eq!(r.worker, 1);
        assert_eq!(r.game.moves_text(), g.game.moves_text());
        assert_eq!(r.game.position(), g.game.position());
        assert_eq!(r.slot.pending, g.slot.pending);
        assert_eq!(r.slot.rng, g.slot.rng);
        let fields = |s: &Slot| {
            (
                s.seed,
                s.low,
                s.play_out,
                s.would_resign,
                s.drawn,
                s.opponent,
            )
        };
        assert_eq!(fields(&r.slot), fields(&g.slot));
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn a_damaged_or_foreign_running_file_is_refused_with_what_is_wrong() {
        let path = scratch("damaged.json");
        let variant = Variant::two_foxes();
        write_running(&path, 4, variant, &[running_game()]).unwrap();
        let good: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let refused = |edit: &dyn Fn(&mut serde_json::Value), generation: u32| {
            let mut v = good.clone();
            edit(&mut v);
            std::fs::write(&path, v.to_string()).unwrap();
            let err = read_running(&path, generation, variant)
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(&path.display().to_string()), "{err}");
            err
        };
        let err = refused(&|_| {}, 5);
        assert!(err.contains("generation 4, expected 5"), "{err}");
        let err = refused(&|v| v["variant"] = "classic".into(), 4);
        assert!(err.contains("the run plays \"two-foxes\""), "{err}");
        let err = refused(&|v| v["version"] = 9.into(), 4);
        assert!(err.contains("version 9"), "{err}");
        let err = refused(&|v| v["games"][0]["moves"] = "zz".into(), 4);
        assert!(err.contains("game 1: move 1 `zz`"), "{err}");
        let err = refused(
            &|v| v["games"][0]["samples"][1]["policy"] = serde_json::json!([1.0]),
            4,
        );
        assert!(
            err.contains("game 1: the sample at ply 3 has 1 policy entries"),
            "{err}"
        );
        let err = refused(&|v| v["games"][0]["samples"][1]["ply"] = 9.into(), 4);
        assert!(err.contains("a sample at ply 9"), "{err}");
        let err = refused(&|v| v["games"][0]["opponent"] = "hens".into(), 4);
        assert!(err.contains("opponent: unknown side `hens`"), "{err}");
        std::fs::write(&path, "{").unwrap();
        let err = read_running(&path, 4, variant).unwrap_err().to_string();
        assert!(err.contains("not a running-games file"), "{err}");
        std::fs::remove_file(&path).unwrap();
        let err = read_running(&path, 4, variant).unwrap_err().to_string();
        assert!(err.contains("missing: with selfplay.carry_over"), "{err}");
    }
}
