//! The strength ladder: one agent against a list of rungs (usually alpha-beta
//! at doubling times per move), and the rung time it is worth.
//!
//! Every rung is a match of the same length from the same seeded openings
//! (the openings depend on the seed and the opening index only), so the rungs
//! differ only in the opponent. Each opening is played once with the agent on
//! each side, so each rung's result is a set of game pairs and its pair score
//! has the pair interval of [`crate::stats`].
//!
//! **Time equivalent.** The rung time at which the agent's pair score crosses
//! 0.5, interpolated linearly in log time between the two rungs around the
//! crossing. The rung time is the rung's *measured* thinking time per move
//! ([`crate::ThinkingTime`]), not its `ms=` budget: the question is what time an
//! alpha-beta search needs to match the agent, and a search overshoots its
//! budget (a ply in progress is finished) by an amount that grows with the
//! budget; rungs without a time budget (`alphabeta:depth=4`, `random`) have a
//! measured time too. Rungs are ordered by that time for the interpolation.
//! Outside the ladder the equivalent is open: above the slowest rung when the
//! agent scores more than 0.5 against every rung, below the fastest when it
//! scores less against every one.
//!
//! **More than one crossing.** Against stronger rungs the score should fall,
//! but with a few dozen pairs per rung it can rise again by chance. The
//! scores are then replaced by their isotonic fit (pool adjacent violators,
//! weighted by pairs): the non-increasing sequence closest to them in least
//! squares, in which each run of rungs that breaks the order gets its pooled
//! score. It uses every rung, unlike "the first crossing from the top" (or
//! from the bottom), which would pick one end of the noisy stretch. Where the
//! fit is exactly 0.5 over a stretch of rungs, the equivalent is that
//! stretch's middle in log time.
//!
//! **Interval.** The same crossing of the curves through the lower and the
//! upper bounds of the rungs' pair intervals (each fitted the same way). The
//! fit and the crossing are both increasing in the scores, so the estimate
//! always lies inside. Each bound is a pointwise 95% bound, not a joint one,
//! so this is a plausible range rather than an exact 95% interval.
//!
//! **Per side.** When the geese win most games, scores alone hide strength:
//! a stronger agent's geese win faster and lose fewer geese, its foxes hold
//! out longer and take more. So per rung and per side the ladder also counts
//! the plies to the end, the geese captured (the variant's geese at the start
//! minus those left after replaying the game's moves), and the end reasons.

use crate::stats::{PairRecord, Record};
use crate::summary::result_for;
use crate::{
    match_jobs, play_games, AgentFactory, ArenaError, GameJob, GameRow, MatchConfig, MatchSummary,
};
use halatafl_rules::{Game, Side, Variant};
use std::collections::BTreeMap;
use std::fmt;

/// Splits a comma-separated list of agent specs. Specs have commas of their
/// own (`alphabeta:depth=6,ms=200`), so a piece that is a `key=value` option
/// (an `=` before any `:`) belongs to the spec before it, and any other piece
/// starts a new spec: an agent kind never holds `=`, and an option value
/// never holds a comma. Empty pieces are dropped.
pub fn split_specs(text: &str) -> Vec<String> {
    let mut specs: Vec<String> = Vec::new();
    for piece in text.split(',').filter(|p| !p.is_empty()) {
        let is_option = match (piece.find('='), piece.find(':')) {
            (Some(eq), Some(colon)) => eq < colon,
            (Some(_), None) => true,
            (None, _) => false,
        };
        match specs.last_mut() {
            Some(spec) if is_option => {
                spec.push(',');
                spec.push_str(piece);
            }
            _ => specs.push(piece.to_string()),
        }
    }
    specs
}

/// The agent's games on one side against one rung.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SidePlay {
    /// The agent's wins, draws and losses on this side.
    pub record: Record,
    /// Plies of all these games, openings included.
    pub plies: usize,
    /// Geese captured in all these games.
    pub geese_captured: usize,
    /// Games per end reason (`pen-filled`, `fewer-than-nine`, ...).
    pub reasons: BTreeMap<String, u64>,
}

impl SidePlay {
    /// Mean plies to the end of a game (0 without games).
    pub fn mean_plies(&self) -> f64 {
        self.plies as f64 / self.record.games().max(1) as f64
    }

    /// Mean geese captured per game (0 without games).
    pub fn mean_geese_captured(&self) -> f64 {
        self.geese_captured as f64 / self.record.games().max(1) as f64
    }

    /// `pen-filled 3, fewer-than-nine 1`: most frequent first.
    pub fn reasons_text(&self) -> String {
        let mut reasons: Vec<(&String, &u64)> = self.reasons.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
        parts.join(", ")
    }

    fn add(&mut self, row: &GameRow, side: Side, geese_captured: usize) {
        self.record.add(result_for(row, side));
        self.plies += row.plies;
        self.geese_captured += geese_captured;
        *self.reasons.entry(row.reason.clone()).or_default() += 1;
    }
}

/// Geese captured in the game of `row`: its variant's geese at the start
/// minus those left once its moves are replayed from the start position.
pub fn geese_captured(row: &GameRow) -> Result<usize, ArenaError> {
    let bad = |why: String| ArenaError::Config(format!("game {}: {why}", row.game));
    let variant: Variant = row
        .variant
        .parse()
        .map_err(|e| bad(format!("variant `{}`: {e}", row.variant)))?;
    let mut game = Game::start_of(variant);
    for text in row.moves.split_whitespace() {
        game.play_str(text).map_err(|e| bad(e.to_string()))?;
    }
    let left = game.position().geese().count() as usize;
    Ok(usize::from(variant.geese).saturating_sub(left))
}

/// The agent against one rung.
#[derive(Clone, Debug, PartialEq)]
pub struct RungResult {
    /// The rung's agent spec (the agent's opponent in these games).
    pub spec: String,
    /// The match summary: `agents[0]` is the ladder's agent, `agents[1]` the rung.
    pub summary: MatchSummary,
    /// The agent's games as the foxes.
    pub as_foxes: SidePlay,
    /// The agent's games as the geese.
    pub as_geese: SidePlay,
}

impl RungResult {
    /// The agent's game pairs against this rung.
    pub fn pairs(&self) -> &PairRecord {
        &self.summary.agents[0].pairs
    }

    /// The rung's measured thinking time per move, in ms: the time axis of
    /// the ladder.
    pub fn rung_ms(&self) -> f64 {
        self.summary.agents[1].time.ms_per_move()
    }

    /// The agent's measured thinking time per move, in ms.
    pub fn agent_ms(&self) -> f64 {
        self.summary.agents[0].time.ms_per_move()
    }

    /// This rung as a point of the ladder: its time and the agent's pair score.
    pub fn point(&self) -> LadderPoint {
        let (low, high) = self.pairs().interval();
        LadderPoint {
            ms: self.rung_ms(),
            score: self.pairs().score(),
            low,
            high,
            pairs: self.pairs().pairs(),
        }
    }
}

/// One rung as the interpolation sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LadderPoint {
    /// The rung's time per move, in ms.
    pub ms: f64,
    /// The agent's pair score against the rung.
    pub score: f64,
    /// Lower bound of the score's interval.
    pub low: f64,
    /// Upper bound of the score's interval.
    pub high: f64,
    /// Pairs behind the score: its weight in the isotonic fit.
    pub pairs: u64,
}

/// Where a score curve crosses 0.5 on the time axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Crossing {
    /// Below the fastest rung (this time): the agent scores under 0.5 against every rung.
    Below(f64),
    /// At this time, in ms.
    At(f64),
    /// Above the slowest rung (this time): the agent scores over 0.5 against every rung.
    Above(f64),
}

/// `48 ms`, `< 25 ms`, `> 1600 ms`.
impl fmt::Display for Crossing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Crossing::Below(ms) => write!(f, "< {} ms", fmt_ms(ms)),
            Crossing::At(ms) => write!(f, "{} ms", fmt_ms(ms)),
            Crossing::Above(ms) => write!(f, "> {} ms", fmt_ms(ms)),
        }
    }
}

/// A time with the digits that matter: `1600`, `48.3`, and three
/// significant ones below a millisecond (`0.00412`: a random mover's time).
pub fn fmt_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 1.0 {
        format!("{ms:.1}")
    } else if ms > 0.0 {
        let decimals = (2 - ms.log10().floor() as i32).clamp(3, 12) as usize;
        format!("{ms:.decimals$}")
    } else {
        "0".into()
    }
}

/// The time equivalent and its interval (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeEquivalent {
    /// Where the (fitted) pair scores cross 0.5.
    pub estimate: Crossing,
    /// Where the lower bounds of the pair intervals cross 0.5.
    pub low: Crossing,
    /// Where the upper bounds cross 0.5.
    pub high: Crossing,
    /// The scores fell with rung time only after the isotonic fit.
    pub fitted: bool,
}

/// A rung faster than this (a random mover's microseconds) counts as this
/// fast, so its log time is finite.
const MIN_MS: f64 = 1e-6;

/// Scores this close to 0.5 count as 0.5 (pair scores are multiples of 1/4n,
/// but pooled means are not exact).
const TOLERANCE: f64 = 1e-9;

/// The non-increasing sequence closest to `values` in weighted least squares
/// (pool adjacent violators).
fn non_increasing_fit(values: &[f64], weights: &[f64]) -> Vec<f64> {
    // Blocks of (weighted mean, weight, length).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for (&v, &w) in values.iter().zip(weights) {
        blocks.push((v, w, 1));
        while blocks.len() > 1 && blocks[blocks.len() - 2].0 < blocks[blocks.len() - 1].0 {
            let (m2, w2, n2) = blocks.pop().expect("two blocks");
            let (m1, w1, n1) = blocks.pop().expect("two blocks");
            let w = w1 + w2;
            blocks.push(((m1 * w1 + m2 * w2) / w, w, n1 + n2));
        }
    }
    blocks
        .into_iter()
        .flat_map(|(m, _, n)| std::iter::repeat_n(m, n))
        .collect()
}

/// Where the non-increasing `values` at times `ms` (ascending; `xs` their
/// logs) cross 0.5.
fn crossing(ms: &[f64], xs: &[f64], values: &[f64]) -> Crossing {
    let n = values.len();
    let time = |x: f64| x.exp();
    if values[0] < 0.5 - TOLERANCE {
        return Crossing::Below(ms[0]);
    }
    if values[n - 1] > 0.5 + TOLERANCE {
        return Crossing::Above(ms[n - 1]);
    }
    let even: Vec<usize> = (0..n)
        .filter(|&i| (values[i] - 0.5).abs() <= TOLERANCE)
        .collect();
    match (even.first(), even.last()) {
        (Some(&first), Some(&last)) if first == last => return Crossing::At(ms[first]),
        (Some(&first), Some(&last)) => return Crossing::At(time((xs[first] + xs[last]) / 2.0)),
        _ => {}
    }
    let i = (0..n - 1)
        .find(|&i| values[i] > 0.5 && values[i + 1] < 0.5)
        .expect("a non-increasing sequence from above 0.5 to below it steps over it");
    let fraction = (values[i] - 0.5) / (values[i] - values[i + 1]);
    Crossing::At(time(xs[i] + fraction * (xs[i + 1] - xs[i])))
}

/// The time equivalent of a ladder (module docs); `None` without rungs.
/// The points may come in any order; they are sorted by time.
pub fn time_equivalent(points: &[LadderPoint]) -> Option<TimeEquivalent> {
    if points.is_empty() {
        return None;
    }
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.ms.total_cmp(&b.ms));
    let ms: Vec<f64> = sorted.iter().map(|p| p.ms).collect();
    let xs: Vec<f64> = ms.iter().map(|t| t.max(MIN_MS).ln()).collect();
    let weights: Vec<f64> = sorted.iter().map(|p| p.pairs.max(1) as f64).collect();
    let curve = |value: fn(&LadderPoint) -> f64| {
        let values: Vec<f64> = sorted.iter().map(value).collect();
        let fit = non_increasing_fit(&values, &weights);
        let changed = fit
            .iter()
            .zip(&values)
            .any(|(a, b)| (a - b).abs() > TOLERANCE);
        (crossing(&ms, &xs, &fit), changed)
    };
    let (estimate, fitted) = curve(|p| p.score);
    Some(TimeEquivalent {
        estimate,
        low: curve(|p| p.low).0,
        high: curve(|p| p.high).0,
        fitted,
    })
}

/// A ladder's results.
#[derive(Clone, Debug, PartialEq)]
pub struct Ladder {
    /// The agent climbing the ladder.
    pub agent: String,
    /// Games per rung.
    pub games: usize,
    /// One per rung, in the order given.
    pub rungs: Vec<RungResult>,
    /// The rung time the agent is worth, with its range.
    pub equivalent: TimeEquivalent,
}

/// Refuses a ladder that could not be played or read back: no rungs, a rung
/// listed twice (its games would merge with the other's in a summary), or an
/// odd number of games (each opening is played once with each side, and
/// game numbers keep the agent on the foxes in odd games).
fn check_ladder(rungs: &[String], games: usize) -> Result<(), ArenaError> {
    if rungs.is_empty() {
        return Err(ArenaError::Config(
            "a ladder needs at least one rung".into(),
        ));
    }
    for (i, rung) in rungs.iter().enumerate() {
        if rungs[..i].contains(rung) {
            return Err(ArenaError::Config(format!("rung `{rung}` is listed twice")));
        }
    }
    if games % 2 == 1 {
        return Err(ArenaError::Config(format!(
            "games {games} is odd: a ladder plays each opening once with each side, so give an even number"
        )));
    }
    Ok(())
}

impl Ladder {
    /// The ladder from its games: rung `k` (0-based) played games
    /// `k * games + 1 ..= (k + 1) * games`, the agent on the foxes in the odd
    /// ones, as [`ladder_jobs`] numbers them.
    pub fn from_rows(
        agent: &str,
        rungs: &[String],
        games: usize,
        rows: &[GameRow],
    ) -> Result<Ladder, ArenaError> {
        check_ladder(rungs, games)?;
        let mut by_rung: Vec<Vec<GameRow>> = vec![Vec::new(); rungs.len()];
        for row in rows {
            let rung = row.game.checked_sub(1).map(|g| g / games.max(1));
            match rung.and_then(|k| by_rung.get_mut(k)) {
                Some(games) => games.push(row.clone()),
                None => {
                    return Err(ArenaError::Config(format!(
                        "game {} is outside the ladder's {} rungs of {games} games",
                        row.game,
                        rungs.len()
                    )))
                }
            }
        }
        let mut results = Vec::new();
        for (spec, rows) in rungs.iter().zip(&by_rung) {
            let mut as_foxes = SidePlay::default();
            let mut as_geese = SidePlay::default();
            for row in rows {
                let captured = geese_captured(row)?;
                if row.game % 2 == 1 {
                    as_foxes.add(row, Side::Foxes, captured);
                } else {
                    as_geese.add(row, Side::Geese, captured);
                }
            }
            results.push(RungResult {
                spec: spec.clone(),
                summary: MatchSummary::from_match(agent, spec, rows),
                as_foxes,
                as_geese,
            });
        }
        let points: Vec<LadderPoint> = results.iter().map(RungResult::point).collect();
        let equivalent = time_equivalent(&points).expect("a ladder has at least one rung");
        Ok(Ladder {
            agent: agent.to_string(),
            games,
            rungs: results,
            equivalent,
        })
    }

    /// `alphabeta` when every rung is of that agent kind (the text before
    /// `:`), else `rung`: what the time equivalent is an equivalent of.
    pub fn rung_kind(&self) -> &str {
        fn kind(spec: &str) -> &str {
            spec.split(':').next().unwrap_or_default()
        }
        match self.rungs.first() {
            Some(first)
                if self
                    .rungs
                    .iter()
                    .all(|r| kind(&r.spec) == kind(&first.spec)) =>
            {
                kind(&first.spec)
            }
            _ => "rung",
        }
    }
}

/// The games of a ladder: for rung `k`, the match of `agent` against it from
/// [`match_jobs`], numbered from `k * games + 1`, so every rung's games start
/// at an odd number (the agent on the foxes) and all rungs share one CSV
/// without collisions. Every rung gets the same openings.
pub fn ladder_jobs(
    agent: &str,
    rungs: &[String],
    config: &MatchConfig,
) -> Result<Vec<GameJob>, ArenaError> {
    config.validate()?;
    check_ladder(rungs, config.games)?;
    let mut jobs = Vec::with_capacity(rungs.len() * config.games);
    for (k, rung) in rungs.iter().enumerate() {
        jobs.extend(match_jobs(agent, rung, config, k * config.games + 1)?);
    }
    Ok(jobs)
}

/// Plays `agent` against every rung (all games in one parallel pool) and
/// returns the games, in game order, and the ladder. Bad specs and settings
/// fail before any game starts.
pub fn run_ladder(
    agent: &str,
    rungs: &[String],
    factory: &AgentFactory,
    config: &MatchConfig,
    progress: &(dyn Fn(&GameRow) + Sync),
) -> Result<(Vec<GameRow>, Ladder), ArenaError> {
    config.validate()?;
    check_ladder(rungs, config.games)?;
    crate::check_total_games(rungs.len(), config.games, "rungs")?;
    factory(agent, 0)?;
    for rung in rungs {
        factory(rung, 0)?;
    }
    let jobs = ladder_jobs(agent, rungs, config)?;
    let rows = play_games(&jobs, factory, config, progress)?;
    let ladder = Ladder::from_rows(agent, rungs, config.games, &rows)?;
    Ok((rows, ladder))
}

/// Two tables: per rung, the agent's pair score with its interval, its score
/// per side and both agents' time per move, then the time equivalent; per
/// rung and side, the agent's results, plies to the end, geese captured and
/// end reasons.
impl fmt::Display for Ladder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .rungs
            .iter()
            .map(|r| r.spec.len())
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(
            f,
            "ladder of {} against {} rungs, {} games each; 95% intervals: normal on game pairs",
            self.agent,
            self.rungs.len(),
            self.games
        )?;
        writeln!(
            f,
            "{:<width$}  pairs  score  interval        as foxes  as geese  geese margin [95%]      result, then margin    agent ms/move  rung ms/move",
            "rung"
        )?;
        for r in &self.rungs {
            let (lo, hi) = r.pairs().interval();
            writeln!(
                f,
                "{:<width$}  {:>5}  {:.3}  [{lo:.3}, {hi:.3}]  {:>8.3}  {:>8.3}  {:<22}  {:<21}  {:>13}  {:>12}",
                r.spec,
                r.pairs().pairs(),
                r.pairs().score(),
                r.as_foxes.record.score(),
                r.as_geese.record.score(),
                crate::margin_text(&r.summary.agents[0].margin),
                crate::result_then_margin_text(&r.summary.agents[0].result_then_margin),
                fmt_ms(r.agent_ms()),
                fmt_ms(r.rung_ms()),
            )?;
        }
        let e = &self.equivalent;
        writeln!(
            f,
            "{} time equivalent: {}, interval [{}, {}] (measured rung time per move at pair score 0.5, log-time interpolation{})",
            self.rung_kind(),
            e.estimate,
            e.low,
            e.high,
            if e.fitted {
                "; scores not falling with rung time, so of their isotonic fit"
            } else {
                ""
            }
        )?;
        writeln!(
            f,
            "\nper side (plies: to the end, opening included; captured: geese per game)"
        )?;
        writeln!(
            f,
            "{:<width$}  agent as  games   +   =   -   plies  captured  end reasons",
            "rung"
        )?;
        for r in &self.rungs {
            for (side, play) in [("foxes", &r.as_foxes), ("geese", &r.as_geese)] {
                let rec = &play.record;
                writeln!(
                    f,
                    "{:<width$}  {side:<8}  {:>5}  {:>2}  {:>2}  {:>2}  {:>6.1}  {:>8.1}  {}",
                    r.spec,
                    rec.games(),
                    rec.wins,
                    rec.draws,
                    rec.losses,
                    play.mean_plies(),
                    play.mean_geese_captured(),
                    play.reasons_text()
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(ms: f64, score: f64) -> LadderPoint {
        LadderPoint {
            ms,
            score,
            low: (score - 0.1).max(0.0),
            high: (score + 0.1).min(1.0),
            pairs: 10,
        }
    }

    fn ladder(scores: &[f64]) -> Vec<LadderPoint> {
        [25.0, 50.0, 100.0, 200.0]
            .iter()
            .zip(scores)
            .map(|(&ms, &s)| point(ms, s))
            .collect()
    }

    fn at(c: Crossing) -> f64 {
        match c {
            Crossing::At(ms) => ms,
            other => panic!("expected a crossing inside the ladder, got {other:?}"),
        }
    }

    #[test]
    fn crossing_between_two_rungs_is_interpolated_in_log_time() {
        // 0.7 at 50 ms, 0.3 at 100 ms: halfway in log time, sqrt(50 * 100).
        let e = time_equivalent(&ladder(&[0.9, 0.7, 0.3, 0.1])).unwrap();
        assert!((at(e.estimate) - 5000f64.sqrt()).abs() < 1e-9, "{e:?}");
        assert!(!e.fitted);
        // 0.8 at 50 ms, 0.4 at 100 ms: three quarters of the way,
        // 50 * 2^0.75 = 84.09 ms.
        let e = time_equivalent(&ladder(&[0.9, 0.8, 0.4, 0.1])).unwrap();
        assert!((at(e.estimate) - 50.0 * 2f64.powf(0.75)).abs() < 1e-9);
        // The bounds (score -+ 0.1): the lower curve 0.7, 0.3 crosses at
        // sqrt(50 * 100) = 70.7; the upper curve 0.9 at 50 ms, 0.5 at 100 ms.
        assert!((at(e.low) - 5000f64.sqrt()).abs() < 1e-9, "{e:?}");
        assert!((at(e.high) - 100.0).abs() < 1e-9, "{e:?}");
        let shown: Vec<String> = [e.estimate, e.low, e.high]
            .iter()
            .map(Crossing::to_string)
            .collect();
        assert_eq!(shown, ["84.1 ms", "70.7 ms", "100 ms"]);
    }

    #[test]
    fn rungs_are_ordered_by_time_whatever_their_order() {
        let mut points = ladder(&[0.9, 0.7, 0.3, 0.1]);
        points.reverse();
        let e = time_equivalent(&points).unwrap();
        assert!((at(e.estimate) - 5000f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn a_score_of_exactly_one_half_is_that_rungs_time() {
        let e = time_equivalent(&ladder(&[0.9, 0.5, 0.3, 0.1])).unwrap();
        assert!((at(e.estimate) - 50.0).abs() < 1e-9);
        // A single rung: its own time, or open on one side.
        assert_eq!(
            time_equivalent(&[point(40.0, 0.5)]).unwrap().estimate,
            Crossing::At(40.0)
        );
        assert_eq!(
            time_equivalent(&[point(40.0, 0.75)]).unwrap().estimate,
            Crossing::Above(40.0)
        );
        assert_eq!(time_equivalent(&[]), None);
    }

    #[test]
    fn outside_the_ladder_the_equivalent_is_open() {
        // Above every rung: more than the slowest rung's time.
        let e = time_equivalent(&ladder(&[0.95, 0.9, 0.8, 0.7])).unwrap();
        assert_eq!(e.estimate, Crossing::Above(200.0));
        assert_eq!(e.estimate.to_string(), "> 200 ms");
        // The lower bounds (0.6 at 200 ms) stay above 0.5 too.
        assert_eq!(e.low, Crossing::Above(200.0));
        assert_eq!(e.high, Crossing::Above(200.0));
        // Below every rung.
        let e = time_equivalent(&ladder(&[0.3, 0.2, 0.1, 0.0])).unwrap();
        assert_eq!(e.estimate, Crossing::Below(25.0));
        assert_eq!(e.estimate.to_string(), "< 25.0 ms");
        // The upper bound at 25 ms is 0.4: below as well.
        assert_eq!(e.high, Crossing::Below(25.0));
        // Only just above: the upper bounds reach 0.5 inside, so the interval
        // is closed above while the estimate is open below.
        let e = time_equivalent(&ladder(&[0.45, 0.42, 0.41, 0.3])).unwrap();
        assert_eq!(e.estimate, Crossing::Below(25.0));
        assert_eq!(e.low, Crossing::Below(25.0));
        // Upper bounds 0.55, 0.52, 0.51, 0.4: 0.51 at 100 ms, 0.4 at 200 ms,
        // crossing 1/11 of the way in log time.
        assert!((at(e.high) - 100.0 * 2f64.powf(1.0 / 11.0)).abs() < 1e-9);
    }

    #[test]
    fn a_score_that_rises_again_is_fitted_before_the_crossing() {
        // 0.4 at 50 ms and 0.6 at 100 ms pool to 0.5 over both: the
        // equivalent is the middle of that stretch in log time.
        let e = time_equivalent(&ladder(&[0.9, 0.4, 0.6, 0.2])).unwrap();
        assert!(e.fitted);
        assert!((at(e.estimate) - 5000f64.sqrt()).abs() < 1e-9, "{e:?}");
        // 0.4 and 0.55 pool to 0.475: the fit is 0.8, 0.475, 0.475, 0.1 and
        // crosses between 25 and 50 ms, 0.3 / 0.325 of the way.
        let e = time_equivalent(&ladder(&[0.8, 0.4, 0.55, 0.1])).unwrap();
        let expected = 25.0 * 2f64.powf(0.3 / 0.325);
        assert!((at(e.estimate) - expected).abs() < 1e-9, "{e:?}");
        // More pairs weigh more: 30 pairs at 0.4 and 10 at 0.6 pool to 0.45.
        let mut points = ladder(&[0.9, 0.4, 0.6, 0.2]);
        points[1].pairs = 30;
        let e = time_equivalent(&points).unwrap();
        let expected = 25.0 * 2f64.powf(0.4 / 0.45);
        assert!((at(e.estimate) - expected).abs() < 1e-9, "{e:?}");
        // A rise at the top that stays above 0.5 leaves the crossing alone.
        let e = time_equivalent(&ladder(&[0.9, 0.7, 0.75, 0.3])).unwrap();
        assert!(e.fitted);
        // Fit 0.9, 0.725, 0.725, 0.3: from 0.725 at 100 ms to 0.3 at 200 ms.
        let expected = 100.0 * 2f64.powf(0.225 / 0.425);
        assert!((at(e.estimate) - expected).abs() < 1e-9, "{e:?}");
    }

    #[test]
    fn the_interval_comes_from_the_bounds_and_holds_the_estimate() {
        let points = vec![
            LadderPoint {
                ms: 10.0,
                score: 0.8,
                low: 0.6,
                high: 0.95,
                pairs: 20,
            },
            LadderPoint {
                ms: 40.0,
                score: 0.55,
                low: 0.45,
                high: 0.65,
                pairs: 20,
            },
            LadderPoint {
                ms: 160.0,
                score: 0.2,
                low: 0.1,
                high: 0.35,
                pairs: 20,
            },
        ];
        let e = time_equivalent(&points).unwrap();
        // Estimate: 0.55 at 40 ms, 0.2 at 160 ms: 1/7 of two doublings.
        assert!((at(e.estimate) - 40.0 * 4f64.powf(1.0 / 7.0)).abs() < 1e-9);
        // Lower bounds 0.6, 0.45: 0.1 / 0.15 of the way from 10 to 40 ms.
        assert!((at(e.low) - 10.0 * 4f64.powf(2.0 / 3.0)).abs() < 1e-9);
        // Upper bounds 0.65, 0.35: halfway from 40 to 160 ms.
        assert!((at(e.high) - 80.0).abs() < 1e-9);
        assert!(at(e.low) < at(e.estimate) && at(e.estimate) < at(e.high));
        // A rung at (near) zero time stays on the log axis.
        let mut fast = points.clone();
        fast[0].ms = 0.0;
        let e = time_equivalent(&fast).unwrap();
        assert!(at(e.low) > 0.0 && at(e.low) < 40.0, "{e:?}");
    }

    #[test]
    fn times_keep_the_digits_that_matter() {
        let shown: Vec<String> = [1600.4, 48.26, 1.0, 0.5, 0.00412, 0.0412, 0.0]
            .iter()
            .map(|&ms| fmt_ms(ms))
            .collect();
        assert_eq!(
            shown,
            ["1600", "48.3", "1.0", "0.500", "0.00412", "0.0412", "0"]
        );
    }

    #[test]
    fn spec_lists_keep_the_commas_of_their_specs() {
        assert_eq!(
            split_specs(
                "alphabeta:depth=6,ms=200,random,alphabeta:ms=25,,mcts:sims=10,gumbel=true"
            ),
            vec![
                "alphabeta:depth=6,ms=200",
                "random",
                "alphabeta:ms=25",
                "mcts:sims=10,gumbel=true"
            ]
        );
        // A value with a colon (a path) is still an option.
        assert_eq!(
            split_specs("net:ckpt=c:/x.pt,sims=0,random"),
            vec!["net:ckpt=c:/x.pt,sims=0", "random"]
        );
        assert!(split_specs("").is_empty());
    }

    #[test]
    fn a_ladder_is_refused_before_it_is_played() {
        let rungs = |specs: &[&str]| specs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let config = MatchConfig {
            games: 4,
            ..MatchConfig::default()
        };
        let err = ladder_jobs("a", &rungs(&[]), &config).unwrap_err();
        assert!(err.to_string().contains("at least one rung"), "{err}");
        let err = ladder_jobs("a", &rungs(&["r", "s", "r"]), &config).unwrap_err();
        assert!(err.to_string().contains("`r` is listed twice"), "{err}");
        let odd = MatchConfig { games: 3, ..config };
        let err = ladder_jobs("a", &rungs(&["r"]), &odd).unwrap_err();
        assert!(err.to_string().contains("games 3 is odd"), "{err}");
    }

    #[test]
    fn jobs_number_rungs_apart_with_the_same_openings() {
        let config = MatchConfig {
            games: 4,
            openings: 2,
            ..MatchConfig::default()
        };
        let rungs = vec!["r1".to_string(), "r2".to_string()];
        let jobs = ladder_jobs("a", &rungs, &config).unwrap();
        let numbers: Vec<usize> = jobs.iter().map(|j| j.game).collect();
        assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 7, 8]);
        for job in &jobs {
            let rung = &rungs[(job.game - 1) / 4];
            let (foxes, geese) = if job.game % 2 == 1 {
                ("a", rung.as_str())
            } else {
                (rung.as_str(), "a")
            };
            assert_eq!((job.foxes.as_str(), job.geese.as_str()), (foxes, geese));
        }
        // Rung 2 plays rung 1's openings.
        for i in 0..4 {
            assert_eq!(jobs[i].start.moves_text(), jobs[i + 4].start.moves_text());
        }
    }

    fn row(game: usize, result: &str, reason: &str, moves: &str) -> GameRow {
        GameRow {
            game,
            opening: (game - 1) / 2,
            opening_moves: String::new(),
            foxes: String::new(),
            geese: String::new(),
            result: result.into(),
            reason: reason.into(),
            plies: moves.split_whitespace().count(),
            moves: moves.into(),
            foxes_seconds: 0.0,
            geese_seconds: 0.0,
            seed: 0,
            variant: "two-foxes".into(),
        }
    }

    #[test]
    fn geese_captured_are_counted_by_replaying_the_game() {
        // Play random legal moves until a fox has captured twice.
        let mut game = Game::start_of(Variant::two_foxes());
        let mut seen = 0;
        let mut moves = Vec::new();
        while game.position().geese().count() > 18 {
            let legal = game.position().legal_moves();
            let m = legal[seen % legal.len()];
            seen += 7;
            moves.push(m.to_string());
            game.play_unchecked(m);
            assert!(game.outcome().is_none() && moves.len() < 500);
        }
        let left = game.position().geese().count() as usize;
        let r = row(1, "draw", "threefold", &moves.join(" "));
        assert_eq!(geese_captured(&r).unwrap(), 20 - left);
        assert_eq!(geese_captured(&row(1, "draw", "x", "")).unwrap(), 0);
        let err = geese_captured(&row(3, "draw", "x", "a1-a2")).unwrap_err();
        assert!(err.to_string().starts_with("game 3: "), "{err}");
    }

    #[test]
    fn per_side_play_is_the_agents_own() {
        let rungs = vec!["r".to_string()];
        // The agent has the foxes in odd games: it loses game 1 and wins game
        // 3 as the foxes, wins game 2 and loses game 4 as the geese.
        let rows = [
            row(1, "geese", "pen-filled", "c7-c6"),
            row(2, "geese", "pen-filled", "c7-c6 d4-d5"),
            row(3, "foxes", "no-moves", ""),
            row(4, "foxes", "fewer-than-nine", ""),
        ];
        let ladder = Ladder::from_rows("a", &rungs, 4, &rows).unwrap();
        let r = &ladder.rungs[0];
        assert_eq!(
            r.as_foxes.record,
            Record {
                wins: 1,
                draws: 0,
                losses: 1
            }
        );
        assert_eq!(
            r.as_geese.record,
            Record {
                wins: 1,
                draws: 0,
                losses: 1
            }
        );
        assert_eq!(r.as_foxes.mean_plies(), 0.5);
        assert_eq!(r.as_geese.mean_plies(), 1.0);
        assert_eq!(r.as_foxes.reasons_text(), "no-moves 1, pen-filled 1");
        // Pairs: opening 0 lost then won (1/2), opening 1 won then lost.
        assert_eq!(r.pairs().counts, [0, 0, 2, 0, 0]);
        // The pair score is 0.5, so the equivalent is the rung's own time.
        assert_eq!(ladder.equivalent.estimate, Crossing::At(r.rung_ms()));
        // A game past the last rung is refused.
        let err = Ladder::from_rows("a", &rungs, 2, &rows).unwrap_err();
        assert!(err.to_string().contains("game 3 is outside"), "{err}");
        let text = ladder.to_string();
        assert!(text.contains("r time equivalent"), "{text}");
    }
}
