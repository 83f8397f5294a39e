//! The games the server was given: every game CSV named with `--games` and
//! the game files of every run directory named with `--run`: its
//! evaluation games (`eval.csv`), its expert games (`bootstrap.csv`) and its
//! self-play games (`shards/gen_NNNN/games.csv`, `w<worker>-<seq>.games.csv`).
//!
//! A file is read by its header, so one reader takes match, tournament,
//! ladder, evaluation and self-play files alike: the game columns of
//! `GameRow` (docs/matches.md), with `generation` and `opponent` where an
//! evaluation file has them and `start` where a self-play game began at a
//! position drawn from earlier games. Every game is replayed by the rules
//! when it is read; a row that does not parse or replay is kept out of the
//! list and reported, with its file and line, on the page: one bad line
//! never hides the others.

use crate::line::LineRequest;
use halatafl_rules::{excerpt, Game};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where games come from, as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A game CSV.
    Csv(PathBuf),
    /// A run directory (`halatafl train`).
    Run(PathBuf),
}

/// One game of the catalog.
#[derive(Clone, Debug)]
pub struct CatalogGame {
    /// What the list shows.
    pub summary: GameSummary,
    /// The game as a line the page can open.
    pub line: LineRequest,
}

/// A game as the list shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameSummary {
    /// The game's id in this server (its index in the catalog).
    pub id: usize,
    /// The file it was read from, as given (or below the run directory).
    pub file: String,
    /// The CSV line (the header is line 1).
    pub line: u64,
    /// The game's number in its file (`game` column), when there is one.
    pub game: Option<usize>,
    /// The generation, for a run's games.
    pub generation: Option<u32>,
    /// The opponent's name in the run's config (evaluation games).
    pub opponent: Option<String>,
    /// The foxes' agent.
    pub foxes: String,
    /// The geese's agent.
    pub geese: String,
    /// `foxes`, `geese` or `draw`.
    pub result: String,
    /// The end rule, or `resigned` / `max-plies` for self-play.
    pub reason: String,
    /// Plies in the game.
    pub plies: usize,
    /// The variant.
    pub variant: String,
}

/// A line of a file that could not be listed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    /// The file.
    pub file: String,
    /// The line (0 for the file as a whole).
    pub line: u64,
    /// What is wrong.
    pub why: String,
}

/// The columns read from a game file; others are ignored.
#[derive(Debug, Deserialize)]
struct Row {
    #[serde(default)]
    game: Option<usize>,
    #[serde(default)]
    generation: Option<u32>,
    #[serde(default)]
    opponent: Option<String>,
    foxes: String,
    geese: String,
    result: String,
    reason: String,
    moves: String,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    start: Option<String>,
}

/// Most plies of one game the catalog takes (Two Foxes games end long
/// before: the fifty-move rule and the captures bound them).
pub const MAX_GAME_PLIES: usize = 20_000;

/// The games and the problems met reading them.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// Every game read, in file order.
    pub games: Vec<CatalogGame>,
    /// Rows and files that could not be read.
    pub problems: Vec<Problem>,
    /// The files read, in order.
    pub files: Vec<String>,
}

impl Catalog {
    /// Reads every source. Never fails: what cannot be read is a problem.
    pub fn load(sources: &[Source]) -> Catalog {
        let mut catalog = Catalog::default();
        for source in sources {
            match source {
                Source::Csv(path) => catalog.read_file(path),
                Source::Run(dir) => {
                    let mut files: Vec<PathBuf> = ["bootstrap.csv", "eval.csv"]
                        .iter()
                        .map(|name| dir.join(name))
                        .filter(|p| p.is_file())
                        .collect();
                    files.extend(selfplay_game_files(dir));
                    if files.is_empty() {
                        catalog.problem(
                            &dir.display().to_string(),
                            0,
                            "no games here yet: a run keeps them in eval.csv, bootstrap.csv and shards/gen_*/*games.csv"
                                .into(),
                        );
                    }
                    for file in files {
                        catalog.read_file(&file);
                    }
                }
            }
        }
        catalog
    }

    fn problem(&mut self, file: &str, line: u64, why: String) {
        self.problems.push(Problem {
            file: file.to_string(),
            line,
            why,
        });
    }

    fn read_file(&mut self, path: &Path) {
        let name = path.display().to_string();
        self.files.push(name.clone());
        let mut reader = match csv::Reader::from_path(path) {
            Ok(r) => r,
            Err(e) => {
                self.problem(&name, 0, format!("cannot read: {e}"));
                return;
            }
        };
        let headers = match reader.headers() {
            Ok(h) => h.clone(),
            Err(e) => {
                self.problem(&name, 1, format!("no header line: {e}"));
                return;
            }
        };
        for record in reader.records() {
            let record = match record {
                Ok(r) => r,
                Err(e) => {
                    let line = e.position().map_or(0, |p| p.line());
                    self.problem(&name, line, format!("not a CSV row: {e}"));
                    if e.position().is_none() {
                        break;
                    }
                    continue;
                }
            };
            let line = record.position().map_or(0, |p| p.line());
            let row: Row = match record.deserialize(Some(&headers)) {
                Ok(row) => row,
                Err(e) => {
                    self.problem(&name, line, format!("not a game row: {e}"));
                    continue;
                }
            };
            match self.game_of(row, &name, line) {
                Ok(game) => self.games.push(game),
                Err(why) => self.problem(&name, line, why),
            }
        }
    }

    fn game_of(&self, row: Row, file: &str, line: u64) -> Result<CatalogGame, String> {
        if !matches!(row.result.as_str(), "foxes" | "geese" | "draw") {
            return Err(format!(
                "result `{}`: expected `foxes`, `geese` or `draw`",
                excerpt(&row.result, None)
            ));
        }
        let moves: Vec<String> = row.moves.split_whitespace().map(str::to_string).collect();
        let given = |field: Option<String>| field.filter(|s| !s.trim().is_empty());
        let request = LineRequest {
            variant: given(row.variant),
            start: given(row.start),
            moves,
        };
        let game: Game = request.game(MAX_GAME_PLIES)?;
        Ok(CatalogGame {
            summary: GameSummary {
                id: self.games.len(),
                file: file.to_string(),
                line,
                game: row.game,
                generation: row.generation,
                opponent: row.opponent.filter(|o| !o.is_empty()),
                foxes: row.foxes,
                geese: row.geese,
                result: row.result,
                reason: row.reason,
                plies: game.ply(),
                variant: game.position().variant().to_string(),
            },
            line: request,
        })
    }

    /// The games that pass `filter`, in catalog order.
    pub fn filtered<'a>(&'a self, filter: &'a GameFilter) -> impl Iterator<Item = &'a CatalogGame> {
        self.games
            .iter()
            .filter(move |g| filter.accepts(&g.summary))
    }

    /// What the filters can choose from: agents, results, end reasons, files.
    pub fn facets(&self) -> Facets {
        let mut f = Facets::default();
        let mut agents = BTreeSet::new();
        let mut results = BTreeSet::new();
        let mut reasons = BTreeSet::new();
        for g in &self.games {
            agents.insert(g.summary.foxes.clone());
            agents.insert(g.summary.geese.clone());
            results.insert(g.summary.result.clone());
            reasons.insert(g.summary.reason.clone());
        }
        f.agents = agents.into_iter().collect();
        f.results = results.into_iter().collect();
        f.reasons = reasons.into_iter().collect();
        f.files = self.files.clone();
        f
    }
}

/// A run's self-play game files: `shards/gen_NNNN/games.csv` and the
/// asynchronous workers' `w<worker>-<seq>.games.csv`, generation by generation.
fn selfplay_game_files(run: &Path) -> Vec<PathBuf> {
    let list = |dir: &Path| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        found.sort();
        found
    };
    list(&run.join("shards"))
        .into_iter()
        .filter(|p| p.is_dir())
        .flat_map(|generation| list(&generation))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("games.csv") && !n.starts_with('.'))
        })
        .collect()
}

/// The values the page offers in its filters.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Facets {
    /// Every agent spec seen, on either side.
    pub agents: Vec<String>,
    /// Every result seen.
    pub results: Vec<String>,
    /// Every end reason seen.
    pub reasons: Vec<String>,
    /// Every file read.
    pub files: Vec<String>,
}

/// The list's filters; an empty field accepts every game.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameFilter {
    /// Games this agent played (exact spec, or a part of it).
    #[serde(default)]
    pub agent: Option<String>,
    /// With `agent`: the side it played; alone: no effect but validation.
    #[serde(default)]
    pub side: Option<String>,
    /// `foxes`, `geese` or `draw`.
    #[serde(default)]
    pub result: Option<String>,
    /// The end reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// The file.
    #[serde(default)]
    pub file: Option<String>,
    /// Games to skip (paging).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Most games to list (at most [`MAX_LIST`]).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Most games one list answer holds.
pub const MAX_LIST: usize = 1000;

fn given(field: &Option<String>) -> Option<&str> {
    field.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

impl GameFilter {
    /// Refuses a side other than `foxes` or `geese` and a limit above
    /// [`MAX_LIST`], naming the parameter.
    pub fn check(&self) -> Result<(), String> {
        if let Some(side) = given(&self.side) {
            if !matches!(side, "foxes" | "geese") {
                return Err(format!(
                    "side `{}`: expected `foxes` or `geese`",
                    excerpt(side, None)
                ));
            }
        }
        if self.limit.is_some_and(|l| l == 0 || l > MAX_LIST) {
            return Err(format!("limit: expected 1 to {MAX_LIST} games"));
        }
        Ok(())
    }

    /// Whether the game passes every filter given.
    pub fn accepts(&self, g: &GameSummary) -> bool {
        if let Some(agent) = given(&self.agent) {
            let plays = |spec: &str| spec == agent || spec.contains(agent);
            let ok = match given(&self.side) {
                Some("foxes") => plays(&g.foxes),
                Some("geese") => plays(&g.geese),
                _ => plays(&g.foxes) || plays(&g.geese),
            };
            if !ok {
                return false;
            }
        }
        given(&self.result).is_none_or(|r| g.result == r)
            && given(&self.reason).is_none_or(|r| g.reason == r)
            && given(&self.file).is_none_or(|f| g.file == f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    const HEADER: &str = "game,opening,opening_moves,foxes,geese,result,reason,plies,moves,foxes_seconds,geese_seconds,seed,variant\n";

    #[test]
    fn games_are_listed_and_bad_lines_reported_with_file_and_line() {
        let dir = std::env::temp_dir().join(format!("halatafl-board-cat-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let text = format!(
            "{HEADER}1,0,,random,alphabeta:depth=1,geese,pen-filled,2,c7-c6 a3-a2,0,0,1,two-foxes\n\
             2,0,,random,alphabeta:depth=1,geese,pen-filled,2,c7-c6 a4-a5,0,0,1,two-foxes\n\
             3,0,,a,b,nobody,pen-filled,0,,0,0,1,two-foxes\n\
             4,0,,alphabeta:depth=1,random,foxes,no-moves,1,c7-c6,0,0,1,two-foxes\n"
        );
        let csv = write(&dir, "m.csv", &text);
        let run = dir.join("run");
        write(
            &run,
            "shards/gen_0001/games.csv",
            "generation,game,foxes,geese,result,reason,plies,moves,start,variant\n\
             1,1,selfplay,selfplay,draw,max-plies,1,c6-c7,..F/F../......./GGGGGGG/GGGGGGG/GGG/GGG f 1,two-foxes\n",
        );
        write(
            &run,
            "eval.csv",
            &format!(
                "generation,opponent,{HEADER}3,random,1,0,,net,random,geese,pen-filled,1,c7-c6,0,0,1,two-foxes\n"
            ),
        );
        let catalog = Catalog::load(&[Source::Csv(csv.clone()), Source::Run(run.clone())]);
        assert_eq!(catalog.games.len(), 4, "{:?}", catalog.problems);
        // The self-play game began at its drawn start.
        assert_eq!(catalog.games[3].summary.reason, "max-plies");
        assert_eq!(catalog.games[3].summary.generation, Some(1));
        assert!(catalog.games[3].line.start.is_some());
        let lines: Vec<u64> = catalog.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2, 4], "{:?}", catalog.problems);
        assert!(catalog.problems[0].why.contains("move 2 `a3-a2`"));
        assert!(catalog.problems[1].why.contains("result `nobody`"));
        assert_eq!(catalog.games[2].summary.generation, Some(3));
        assert_eq!(catalog.games[2].summary.opponent.as_deref(), Some("random"));
        let by = |f: GameFilter| {
            catalog
                .filtered(&f)
                .map(|g| g.summary.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            by(GameFilter {
                agent: Some("alphabeta".into()),
                side: Some("geese".into()),
                ..GameFilter::default()
            }),
            [0]
        );
        assert_eq!(
            by(GameFilter {
                result: Some("geese".into()),
                ..GameFilter::default()
            }),
            [0, 2]
        );
        assert_eq!(
            by(GameFilter {
                reason: Some("no-moves".into()),
                ..GameFilter::default()
            }),
            [1]
        );
        let missing = Catalog::load(&[
            Source::Csv(dir.join("nope.csv")),
            Source::Run(dir.join("empty")),
        ]);
        assert_eq!(missing.problems.len(), 2);
        assert!(missing.problems[0].why.starts_with("cannot read"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
