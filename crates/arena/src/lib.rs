//! The match arena: games between agents, in parallel, logged to CSV, with
//! the statistics that make the results trustworthy.
//!
//! A match of N games alternates sides: game 1 (and every odd game) has agent
//! A on the foxes, game 2 swaps. With `openings = K`, each pair of games
//! starts from the same seeded K-ply random opening, once with each agent on
//! each side, so neither side's luck in the opening counts; an opening
//! book ([`book`]) replaces the random openings by chosen ones, paired the
//! same way. Agents are made per game by a factory closure, so this crate
//! knows no agent kinds and every game starts from fresh agents
//! (`new_game(seed)` with the game's derived seed): a match is reproducible
//! from its seed for depth-limited agents, whatever the thread count.

#![warn(missing_docs)]

pub mod book;
pub mod csvlog;
pub mod ladder;
pub mod ratings;
pub mod stats;
mod summary;

pub use book::OpeningBook;
pub use csvlog::{
    append_csv_atomic, csv_bytes, parse_game_rows, read_game_rows, same_file, write_csv_atomic,
    write_target, GameRow, ThinkingTime,
};
pub use ladder::{run_ladder, Ladder};
pub use ratings::{fit_ratings, Rating};
pub use summary::{
    ends_in_order, geese_taken, margin_text, result_then_margin_text, scoreboard, MatchSummary,
    SideRecords, INTERVALS,
};

use halatafl_agent::{Agent, Budget, SpecError};
use halatafl_rules::{Game, Side, Variant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::time::Instant;
use thiserror::Error;

/// Builds an agent from its spec and a seed.
pub type AgentFactory<'a> = dyn Fn(&str, u64) -> Result<Box<dyn Agent>, SpecError> + Sync + 'a;

/// Why a match, tournament or ladder did not run or its files could not be
/// read or written.
#[derive(Debug, Error)]
pub enum ArenaError {
    /// An agent could not be built from its spec.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// An agent broke the [`Agent`] contract. The match stops rather than
    /// score a game the agent did not really play.
    #[error("game {game}, ply {ply}: agent `{spec}` returned the illegal move {mv} in {position}")]
    IllegalMove {
        /// The game's number in the match.
        game: usize,
        /// The ply the move would have been, from 1.
        ply: usize,
        /// The offending agent.
        spec: String,
        /// The move it returned.
        mv: String,
        /// The position it was asked to move in.
        position: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// An output path names a directory or a special file, which an atomic
    /// rename would replace.
    #[error("{path} is {what}; give the path of a regular file to write")]
    NotAFile {
        /// The path as given.
        path: String,
        /// What is there instead.
        what: String,
    },
    /// The CSV library failed to read or write a record.
    #[error("CSV: {0}")]
    Csv(#[from] csv::Error),
    /// A game CSV row that parses but does not describe a possible game
    /// (unknown result or reason, variant, non-finite times).
    #[error("{path}, line {line}: {why}")]
    BadRow {
        /// The file (or reader name) the row came from.
        path: String,
        /// Its line in the file.
        line: u64,
        /// What is wrong with it.
        why: String,
    },
    /// Appending to a CSV whose columns are not the rows' own: the file was
    /// written by something else (or another version) and is left alone.
    #[error("{path}: the existing header `{found}` differs from `{expected}`; not appending")]
    HeaderMismatch {
        /// The CSV file.
        path: String,
        /// Its first line.
        found: String,
        /// The header the rows would have.
        expected: String,
    },
    /// The worker thread pool could not be made.
    #[error("could not build a pool of {threads} threads: {why}")]
    Threads {
        /// The threads asked for.
        threads: usize,
        /// The thread pool's message.
        why: String,
    },
    /// Settings out of range or inconsistent (games, openings, threads, a
    /// player or rung listed twice), named with their range.
    #[error("{0}")]
    Config(String),
    /// Random play ended every drawn opening before it reached its length.
    #[error("no random opening of {plies} plies keeps the {variant} game going in {tries} draws; use fewer opening plies")]
    NoOpening {
        /// The opening length asked for.
        plies: usize,
        /// The game.
        variant: Variant,
        /// Openings drawn ([`OPENING_TRIES`]).
        tries: usize,
    },
}

/// The most games one match (or one pair of a tournament) may ask for. A
/// bound, so a typo cannot ask for petabytes: every game keeps a result row
/// until the match ends.
pub const MAX_GAMES: usize = 1_000_000;

/// Refuses a job of `matches` matches of `games` games each (a
/// tournament's pairs, a ladder's rungs) that would play more than
/// [`MAX_GAMES`] games in all: every game's job and row is held in memory,
/// so the bound on one match must hold for the whole job list too.
pub fn check_total_games(matches: usize, games: usize, what: &str) -> Result<(), ArenaError> {
    match matches.checked_mul(games) {
        Some(total) if total <= MAX_GAMES => Ok(()),
        total => Err(ArenaError::Config(format!(
            "games: {matches} {what} of {games} games each is {} games in all, more than the \
             {MAX_GAMES} one job may play; play fewer games per match or split the job",
            total.map_or_else(|| "over 2^64".to_string(), |t| t.to_string())
        ))),
    }
}

/// The longest random opening, in plies. Random play rarely ends a game
/// this early, so an opening is found in a few draws; a longer one would
/// mostly measure random play and, past the point where random games end,
/// could never be found at all.
pub const MAX_OPENING_PLIES: usize = 40;

/// Random openings drawn before [`random_opening`] gives up.
pub const OPENING_TRIES: usize = 10_000;

/// The most worker threads a match, tournament or run may ask for.
pub const MAX_THREADS: usize = 1024;

/// Settings of a match or tournament.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Games per match (per pair in a tournament).
    pub games: usize,
    /// Seed of the openings and of every agent's tie-breaks.
    pub seed: u64,
    /// Random plies before the agents take over (0: the start position).
    pub openings: usize,
    /// Openings from a book instead of random ones: opening `k` of the book
    /// starts games `2k+1` and `2k+2`. Shared, so copies of the config for
    /// a tournament's pairs or a ladder's rungs do not copy the games.
    pub book: Option<std::sync::Arc<OpeningBook>>,
    /// Worker threads; `None` uses rayon's global pool.
    pub threads: Option<usize>,
    /// The game played.
    pub variant: Variant,
    /// Budget passed to every `choose` (empty: each agent's spec decides).
    pub budget: Budget,
}

impl MatchConfig {
    /// Refuses settings that could not finish or would exhaust memory, naming
    /// the setting and its range.
    pub fn validate(&self) -> Result<(), ArenaError> {
        if !(1..=MAX_GAMES).contains(&self.games) {
            return Err(ArenaError::Config(format!(
                "games {} is out of range: from 1 to {MAX_GAMES} per match (or pair of agents)",
                self.games
            )));
        }
        if let Some(book) = &self.book {
            if self.openings > 0 {
                return Err(ArenaError::Config(format!(
                    "openings {} and book {}: both choose the openings; give one",
                    self.openings, book.source
                )));
            }
            if self.games > 2 * book.len() {
                return Err(ArenaError::Config(format!(
                    "games {} is more than book {} serves: its {} openings make at most {} \
                     games (each opening once with each agent on each side)",
                    self.games,
                    book.source,
                    book.len(),
                    2 * book.len()
                )));
            }
            if let Some(other) = book
                .openings
                .iter()
                .find(|g| g.position().variant() != self.variant)
            {
                return Err(ArenaError::Config(format!(
                    "book {} holds {} openings but the match plays {}",
                    book.source,
                    other.position().variant(),
                    self.variant
                )));
            }
        }
        if self.openings > MAX_OPENING_PLIES {
            return Err(ArenaError::Config(format!(
                "openings {} is out of range: from 0 to {MAX_OPENING_PLIES} random plies",
                self.openings
            )));
        }
        if self
            .threads
            .is_some_and(|t| !(1..=MAX_THREADS).contains(&t))
        {
            return Err(ArenaError::Config(format!(
                "threads {} is out of range: from 1 to {MAX_THREADS}",
                self.threads.unwrap_or_default()
            )));
        }
        Ok(())
    }
}

impl Default for MatchConfig {
    fn default() -> MatchConfig {
        MatchConfig {
            games: 100,
            seed: 1,
            openings: 0,
            book: None,
            threads: None,
            variant: Variant::two_foxes(),
            budget: Budget::default(),
        }
    }
}

/// One game to play.
#[derive(Clone, Debug)]
pub struct GameJob {
    /// The game's number, unique within a run of jobs: its row's key.
    pub game: usize,
    /// Which opening it starts from; the two games of a pair share it.
    pub opening: usize,
    /// The game after its opening, random or the book's (the start when
    /// there is none).
    pub start: Game,
    /// Spec of the agent on the foxes.
    pub foxes: String,
    /// Spec of the agent on the geese.
    pub geese: String,
    /// The game's own seed, from which both agents' seeds are derived, so a
    /// game replays alike whichever thread plays it.
    pub seed: u64,
}

/// splitmix64 of `a` and `b`: independent-looking seeds from a base seed.
pub fn derive_seed(a: u64, b: u64) -> u64 {
    let mut z = a ^ b
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(0x632b_e59b_d9b4_e019);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A `plies`-ply random opening from the start of `variant`, reproducible from
/// `seed`. Openings that end the game are redrawn, at most [`OPENING_TRIES`]
/// times; `plies` above [`MAX_OPENING_PLIES`] are refused.
pub fn random_opening(variant: Variant, plies: usize, seed: u64) -> Result<Game, ArenaError> {
    if plies > MAX_OPENING_PLIES {
        return Err(ArenaError::Config(format!(
            "openings of {plies} plies: at most {MAX_OPENING_PLIES} random plies"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..OPENING_TRIES {
        let mut game = Game::start_of(variant);
        while game.ply() < plies && game.outcome().is_none() {
            let moves = game.position().legal_moves();
            game.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
        if game.outcome().is_none() {
            return Ok(game);
        }
    }
    Err(ArenaError::NoOpening {
        plies,
        variant,
        tries: OPENING_TRIES,
    })
}

/// The games of a match between `a` and `b`, numbered from `first_game`.
/// Game `first_game + i` uses opening `i / 2` (random, or the book's) and
/// puts `a` on the foxes when `i` is even. The config is validated first,
/// so the job list is bounded.
pub fn match_jobs(
    a: &str,
    b: &str,
    config: &MatchConfig,
    first_game: usize,
) -> Result<Vec<GameJob>, ArenaError> {
    config.validate()?;
    let mut jobs = Vec::new();
    let mut start = Game::start_of(config.variant);
    for i in 0..config.games {
        let opening = i / 2;
        // The two games of a pair share their opening: it is set once, at
        // the pair's first game.
        if i % 2 == 0 {
            if let Some(book) = &config.book {
                start = book.openings[opening].clone();
            } else if config.openings > 0 {
                start = random_opening(
                    config.variant,
                    config.openings,
                    derive_seed(config.seed, opening as u64),
                )?;
            }
        }
        let (foxes, geese) = if i % 2 == 0 { (a, b) } else { (b, a) };
        let game = first_game + i;
        jobs.push(GameJob {
            game,
            opening,
            start: start.clone(),
            foxes: foxes.to_string(),
            geese: geese.to_string(),
            seed: derive_seed(config.seed ^ 0x5eed, game as u64),
        });
    }
    Ok(jobs)
}

/// The worker threads worth starting for `jobs` games when `requested` are
/// asked for: never more than there are games.
pub fn useful_threads(requested: usize, jobs: usize) -> usize {
    requested.clamp(1, jobs.max(1))
}

/// Plays one game to its end. Each agent is made fresh by `factory` with a
/// seed derived from the game's, and its thinking time is summed.
pub fn play_game(
    job: &GameJob,
    factory: &AgentFactory,
    budget: &Budget,
) -> Result<GameRow, ArenaError> {
    let seeds = [derive_seed(job.seed, 1), derive_seed(job.seed, 2)];
    let mut foxes = factory(&job.foxes, seeds[0])?;
    let mut geese = factory(&job.geese, seeds[1])?;
    foxes.new_game(seeds[0]);
    geese.new_game(seeds[1]);
    let mut game = job.start.clone();
    let mut seconds = [0.0f64; 2];
    while game.outcome().is_none() {
        let side = game.position().side();
        let agent: &mut Box<dyn Agent> = match side {
            Side::Foxes => &mut foxes,
            Side::Geese => &mut geese,
        };
        let started = Instant::now();
        let decision = agent.choose(&game, budget);
        seconds[side as usize] += started.elapsed().as_secs_f64();
        if !game.position().is_legal(decision.mv) {
            return Err(ArenaError::IllegalMove {
                game: job.game,
                ply: game.ply() + 1,
                spec: agent.spec(),
                mv: decision.mv.to_string(),
                position: game.position().to_string(),
            });
        }
        game.play_unchecked(decision.mv);
    }
    Ok(GameRow::from_game(
        job.game,
        job.opening,
        &job.start,
        &game,
        job.foxes.clone(),
        job.geese.clone(),
        seconds,
        job.seed,
    ))
}

/// Plays every job in parallel (`threads` workers, or rayon's global pool)
/// and returns the rows in job order. `progress` sees each row as it ends.
pub fn play_games(
    jobs: &[GameJob],
    factory: &AgentFactory,
    config: &MatchConfig,
    progress: &(dyn Fn(&GameRow) + Sync),
) -> Result<Vec<GameRow>, ArenaError> {
    let run = || {
        jobs.par_iter()
            .map(|job| {
                let row = play_game(job, factory, &config.budget)?;
                progress(&row);
                Ok(row)
            })
            .collect::<Result<Vec<GameRow>, ArenaError>>()
    };
    match config.threads {
        None => run(),
        Some(threads) => rayon::ThreadPoolBuilder::new()
            .num_threads(useful_threads(threads, jobs.len()))
            .build()
            .map_err(|e| ArenaError::Threads {
                threads,
                why: e.to_string(),
            })?
            .install(run),
    }
}

/// A match: the games between `a` and `b` and their summary.
pub fn run_match(
    a: &str,
    b: &str,
    factory: &AgentFactory,
    config: &MatchConfig,
    progress: &(dyn Fn(&GameRow) + Sync),
) -> Result<(Vec<GameRow>, MatchSummary), ArenaError> {
    config.validate()?;
    // Bad specs fail here, before any game starts.
    factory(a, 0)?;
    factory(b, 0)?;
    let jobs = match_jobs(a, b, config, 1)?;
    let rows = play_games(&jobs, factory, config, progress)?;
    let summary = MatchSummary::from_match(a, b, &rows);
    Ok((rows, summary))
}

/// A round robin: `config.games` games for every pair of `agents` (which must
/// be distinct specs), numbered pair by pair; then maximum-likelihood ratings.
pub fn run_tournament(
    agents: &[String],
    factory: &AgentFactory,
    config: &MatchConfig,
    progress: &(dyn Fn(&GameRow) + Sync),
) -> Result<(Vec<GameRow>, Vec<Rating>), ArenaError> {
    if agents.len() < 2 {
        return Err(ArenaError::Config(
            "a tournament needs at least two agents".into(),
        ));
    }
    for (i, a) in agents.iter().enumerate() {
        if agents[..i].contains(a) {
            return Err(ArenaError::Config(format!("agent `{a}` is listed twice")));
        }
        factory(a, 0)?;
    }
    config.validate()?;
    let pairs = agents.len() * (agents.len() - 1) / 2;
    check_total_games(pairs, config.games, "pairs of agents")?;
    let mut jobs = Vec::new();
    for i in 0..agents.len() {
        for j in i + 1..agents.len() {
            jobs.extend(match_jobs(&agents[i], &agents[j], config, jobs.len() + 1)?);
        }
    }
    let rows = play_games(&jobs, factory, config, progress)?;
    let ratings = ratings::ratings_from_rows(agents, &rows);
    Ok((rows, ratings))
}
