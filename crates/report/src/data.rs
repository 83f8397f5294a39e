//! Reading a run directory and turning evaluation games into scores.

use crate::{io_error, ReportError};
use halatafl_arena::stats::{Moments, Record};
use halatafl_arena::ThinkingTime;
use halatafl_arena::{GameRow, MatchSummary};
use halatafl_dataio::read_csv_rows;
pub use halatafl_dataio::{AccuracyRow, EvalRow, SelfPlayRow, TrainRow};
use halatafl_rules::Side;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Everything a report shows, read from a run directory.
#[derive(Clone, Debug, Default)]
pub struct RunData {
    /// The run directory, as given.
    pub dir: PathBuf,
    /// `config.toml` as written by the trainer (every default spelled out).
    pub config_text: String,
    /// `config.toml` parsed loosely, so runs of older versions still report.
    pub config: toml::Table,
    /// `run.json` (git revision, start time, command), when present.
    pub run_info: Option<serde_json::Value>,
    /// `selfplay.csv`: one row per self-play generation (none before the
    /// first has finished).
    pub selfplay: Vec<SelfPlayRow>,
    /// `train.csv`: the losses and learning rate as the trainer logged them.
    pub train: Vec<TrainRow>,
    /// `eval.csv`: every evaluation game, one row each; scores are counted
    /// from these ([`eval_scores`]), not read from a summary.
    pub eval: Vec<EvalRow>,
    /// `accuracy.csv`: error rates on the run's solved suite per
    /// generation (empty for runs without `[eval] suite`).
    pub accuracy: Vec<AccuracyRow>,
}

impl RunData {
    /// The config value at `section.key`, formatted (strings without quotes).
    pub fn config_value(&self, section: &str, key: &str) -> Option<String> {
        let value = self.config.get(section)?.get(key)?;
        Some(match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Array(items) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        })
    }
}

/// Rows of a run CSV, read as the trainer reads them: a missing or empty
/// file has none (a run that has not reached that stage yet), a file that is
/// not that CSV is an error naming it and the line.
fn read_rows<T: DeserializeOwned + Serialize + Default>(
    path: &Path,
) -> Result<Vec<T>, ReportError> {
    Ok(read_csv_rows(path)?)
}

/// Reads `config.toml`, `run.json`, `selfplay.csv`, `train.csv`, `eval.csv`
/// and `accuracy.csv`.
pub fn load_run(dir: &Path) -> Result<RunData, ReportError> {
    let config_path = dir.join("config.toml");
    if !config_path.exists() {
        return Err(ReportError::NotARun {
            path: dir.display().to_string(),
        });
    }
    let config_text =
        std::fs::read_to_string(&config_path).map_err(|e| io_error(&config_path, e))?;
    let config: toml::Table = config_text
        .parse()
        .map_err(|e| io_error(&config_path, format!("not valid TOML: {e}")))?;
    let info_path = dir.join("run.json");
    let run_info = match std::fs::read_to_string(&info_path) {
        Ok(text) => Some(
            serde_json::from_str(&text)
                .map_err(|e| io_error(&info_path, format!("not valid JSON: {e}")))?,
        ),
        Err(_) => None,
    };
    Ok(RunData {
        dir: dir.to_path_buf(),
        config_text,
        config,
        run_info,
        selfplay: read_rows(&dir.join("selfplay.csv"))?,
        train: read_rows(&dir.join("train.csv"))?,
        eval: read_rows(&dir.join("eval.csv"))?,
        accuracy: read_rows(&dir.join("accuracy.csv"))?,
    })
}

/// Which games of the trained network a score counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Perspective {
    /// Every game, whichever side the network had.
    Overall,
    /// The games where the network had the foxes.
    AsFoxes,
    /// The games where the network had the geese.
    AsGeese,
}

impl Perspective {
    /// Every perspective, in the order tables and plots show them.
    pub const ALL: [Perspective; 3] = [
        Perspective::Overall,
        Perspective::AsFoxes,
        Perspective::AsGeese,
    ];
}

impl fmt::Display for Perspective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Perspective::Overall => "overall",
            Perspective::AsFoxes => "as foxes",
            Perspective::AsGeese => "as geese",
        })
    }
}

/// The trained network's score against one opponent in one generation.
#[derive(Clone, Debug, PartialEq)]
pub struct ScorePoint {
    /// The network's generation (the `gen_NNNN` checkpoint).
    pub generation: u32,
    /// The opponent as `eval.csv` names it (`previous`, an agent spec).
    pub opponent: String,
    /// Which of the network's games are counted.
    pub perspective: Perspective,
    /// Wins, draws and losses of the network in those games.
    pub record: Record,
    /// `(wins + draws / 2) / games`, from the network's side.
    pub score: f64,
    /// Lower end of the score's 95% Wilson interval.
    pub low: f64,
    /// Upper end of the score's 95% Wilson interval.
    pub high: f64,
    /// Mean thinking time per own move in these games, in milliseconds, of
    /// the trained network and of its opponent ("equal time" reads these).
    pub ms_per_move: f64,
    /// The same for the opponent, in the same games.
    pub opponent_ms_per_move: f64,
    /// The network's geese margin per game pair against this opponent in
    /// this generation (geese taken as foxes minus geese lost as geese; see
    /// `halatafl_arena::stats`), the same in every perspective's point.
    pub margin: Moments,
}

/// Whether the trained network had the foxes in `row` (see the crate docs).
pub fn trained_side(row: &EvalRow) -> Perspective {
    let own = format!("gen_{:04}.", row.generation);
    let is_me = |spec: &str| spec.starts_with("net:") && spec.contains(&own);
    match (is_me(&row.foxes), is_me(&row.geese)) {
        (true, false) => Perspective::AsFoxes,
        (false, true) => Perspective::AsGeese,
        _ if row.game % 2 == 1 => Perspective::AsFoxes,
        _ => Perspective::AsGeese,
    }
}

/// Scores per generation, opponent (in order of first appearance) and
/// perspective, from `eval.csv` rows.
pub fn eval_scores(rows: &[EvalRow]) -> Vec<ScorePoint> {
    let mut keys: Vec<(u32, String)> = Vec::new();
    for r in rows {
        let key = (r.generation, r.opponent.clone());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let mut opponents: Vec<&str> = Vec::new();
    for r in rows {
        if !opponents.contains(&r.opponent.as_str()) {
            opponents.push(&r.opponent);
        }
    }
    let rank = |o: &str| opponents.iter().position(|x| *x == o).unwrap_or(0);
    keys.sort_by_key(|(g, o)| (rank(o), *g));
    let mut out = Vec::new();
    for (generation, opponent) in keys {
        let mut records = [Record::default(); 3];
        // Per perspective: the network's thinking time and its opponent's.
        let mut times = [(ThinkingTime::default(), ThinkingTime::default()); 3];
        for r in rows
            .iter()
            .filter(|r| r.generation == generation && r.opponent == opponent)
        {
            let own = match trained_side(r) {
                Perspective::AsFoxes => Side::Foxes,
                _ => Side::Geese,
            };
            let result = match r.result.as_str() {
                "draw" => 0,
                w if w == own.name() => 1,
                _ => -1,
            };
            let game = r.game_row();
            for k in [0, if own == Side::Foxes { 1 } else { 2 }] {
                records[k].add(result);
                times[k].0.add(&game, own);
                times[k].1.add(&game, own.other());
            }
        }
        // The network's fox games, by game number (unique within a match).
        let mut fox_games = std::collections::HashSet::new();
        let games: Vec<GameRow> = rows
            .iter()
            .filter(|r| r.generation == generation && r.opponent == opponent)
            .inspect(|r| {
                if trained_side(r) == Perspective::AsFoxes {
                    fox_games.insert(r.game);
                }
            })
            .map(EvalRow::game_row)
            .collect();
        let margin = MatchSummary::from_rows("network", &opponent, &games, |row| {
            fox_games.contains(&row.game)
        })
        .agents[0]
            .margin;
        for ((perspective, record), (mine, theirs)) in
            Perspective::ALL.into_iter().zip(records).zip(times)
        {
            let (low, high) = record.interval();
            out.push(ScorePoint {
                generation,
                opponent: opponent.clone(),
                perspective,
                record,
                score: record.score(),
                low,
                high,
                ms_per_move: mine.ms_per_move(),
                opponent_ms_per_move: theirs.ms_per_move(),
                margin,
            });
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn eval_row(generation: u32, opponent: &str, game: usize, result: &str) -> EvalRow {
        let me = format!("net:ckpt=/r/checkpoints/gen_{generation:04}.safetensors,sims=8");
        let other = if opponent == "previous" {
            format!(
                "net:ckpt=/r/checkpoints/gen_{:04}.safetensors,sims=8",
                generation - 1
            )
        } else {
            opponent.to_string()
        };
        let (foxes, geese) = if game % 2 == 1 {
            (me, other)
        } else {
            (other, me)
        };
        EvalRow {
            generation,
            opponent: opponent.into(),
            game,
            opening: (game - 1) / 2,
            opening_moves: String::new(),
            foxes,
            geese,
            result: result.into(),
            reason: "no-moves".into(),
            plies: 40,
            moves: String::new(),
            foxes_seconds: 0.1,
            geese_seconds: 0.1,
            seed: 1,
            variant: "two-foxes".into(),
        }
    }

    #[test]
    fn the_geese_margin_pairs_the_networks_games_by_opening() {
        let with_moves = |game: usize, moves: &str| EvalRow {
            moves: moves.into(),
            ..eval_row(1, "random", game, "geese")
        };
        // The network has the foxes in odd games. Opening 0: it takes 3,
        // loses 1 (+2); opening 1: takes 0, loses 2 (-2); opening 2: takes
        // 2, loses 0 (+2). Mean +2/3.
        let rows = vec![
            with_moves(1, "c5xe5xe3 e3xc3"),
            with_moves(2, "c5xe5"),
            with_moves(3, "d3-d4"),
            with_moves(4, "c5xe5 e5xe3"),
            with_moves(5, "c5xe5xe3"),
            with_moves(6, "d3-d4"),
        ];
        let scores = eval_scores(&rows);
        for s in &scores {
            assert_eq!(s.margin.n, 3);
            assert!((s.margin.mean() - 2.0 / 3.0).abs() < 1e-12, "{s:?}");
        }
    }

    #[test]
    fn side_from_spec_and_parity() {
        let mut r = eval_row(3, "previous", 1, "foxes");
        assert_eq!(trained_side(&r), Perspective::AsFoxes);
        r = eval_row(3, "previous", 2, "foxes");
        assert_eq!(trained_side(&r), Perspective::AsGeese);
        // A moved run: the specs still name gen_0003, parity is not needed.
        r.game = 7;
        assert_eq!(trained_side(&r), Perspective::AsGeese);
        // Neither spec names the generation: parity decides.
        r.geese = "net:ckpt=elsewhere.safetensors".into();
        assert_eq!(trained_side(&r), Perspective::AsFoxes);
    }

    #[test]
    fn scores_per_side() {
        // Gen 1 vs random: the net wins both foxes games, wins one geese game
        // and draws the other: 3.5 / 4 overall, 1.0 as foxes, 0.75 as geese.
        let rows = vec![
            eval_row(1, "random", 1, "foxes"),
            eval_row(1, "random", 2, "geese"),
            eval_row(1, "random", 3, "foxes"),
            eval_row(1, "random", 4, "draw"),
            eval_row(1, "previous", 1, "geese"),
            eval_row(1, "previous", 2, "geese"),
            eval_row(2, "random", 1, "geese"),
            eval_row(2, "random", 2, "foxes"),
        ];
        let scores = eval_scores(&rows);
        assert_eq!(scores.len(), 9);
        let find = |g: u32, o: &str, p: Perspective| {
            scores
                .iter()
                .find(|s| s.generation == g && s.opponent == o && s.perspective == p)
                .unwrap()
                .clone()
        };
        let overall = find(1, "random", Perspective::Overall);
        assert_eq!(overall.record.games(), 4);
        assert!((overall.score - 0.875).abs() < 1e-12);
        assert!(overall.low < overall.score && overall.high > overall.score);
        assert_eq!(find(1, "random", Perspective::AsFoxes).score, 1.0);
        assert_eq!(find(1, "random", Perspective::AsGeese).score, 0.75);
        // vs previous: won as geese (game 2), lost as foxes (game 1).
        assert_eq!(find(1, "previous", Perspective::AsFoxes).score, 0.0);
        assert_eq!(find(1, "previous", Perspective::AsGeese).score, 1.0);
        assert_eq!(find(2, "random", Perspective::Overall).score, 0.0);
        // Ordered by opponent (first seen), then generation.
        let order: Vec<(u32, &str)> = scores
            .iter()
            .filter(|s| s.perspective == Perspective::Overall)
            .map(|s| (s.generation, s.opponent.as_str()))
            .collect();
        assert_eq!(order, vec![(1, "random"), (2, "random"), (1, "previous")]);
        // Time per move: in gen 2's first game (the net on the foxes) the net
        // thinks 0.3 s over its 20 moves, the opponent 0.1 s over 20.
        let mut timed = rows.clone();
        timed[6].foxes_seconds = 0.3;
        let scores = eval_scores(&timed);
        let p = scores
            .iter()
            .find(|s| s.generation == 2 && s.perspective == Perspective::AsFoxes)
            .unwrap();
        assert!((p.ms_per_move - 15.0).abs() < 1e-9, "{}", p.ms_per_move);
        assert!((p.opponent_ms_per_move - 5.0).abs() < 1e-9);
        let overall = scores
            .iter()
            .find(|s| s.generation == 2 && s.perspective == Perspective::Overall)
            .unwrap();
        assert!((overall.ms_per_move - 10.0).abs() < 1e-9);
    }
}
