//! Match statistics as pure functions.
//!
//! * Score: `s = (wins + draws / 2) / games`.
//! * 95% interval on the score: the **Wilson score interval** (Wilson,
//!   "Probable inference, the law of succession, and statistical inference",
//!   JASA 22, 1927), with `z = 1.96`:
//!   `(s + z²/2n ± z·sqrt(s(1-s)/n + z²/4n²)) / (1 + z²/n)`.
//!   Chosen over the normal interval because it stays inside [0, 1] and is
//!   sensible at s = 0 or 1 (a baseline often wins every game). Draws count
//!   as half a point; since a draw's variance is below a coin flip's, the
//!   interval is conservative when there are draws.
//! * Elo difference from a score (logistic model): `D = -400·log10(1/s - 1)`;
//!   its interval maps the score interval through the same increasing
//!   function (infinite at s = 0 or 1).
//! * **Game pairs** (the pentanomial model of Fishtest, the Stockfish testing
//!   framework): a match plays each opening twice with the sides swapped, so
//!   its games come in pairs. A pair's score for a player is one of 0, 1/4,
//!   1/2, 3/4, 1. The pair scores are independent; the game scores are not
//!   (in Two Foxes the side decides most games: alpha-beta's geese beat its
//!   foxes 95% of the time). The pair interval is the normal one on the
//!   pairs' mean, `s ± z·sqrt(v / N)` over N pairs. It takes the side and
//!   opening effects out of the error, so when the side decides most games
//!   it is much narrower than Wilson's on the games, which treats each game
//!   as a coin toss of probability s. `v` is the pair scores' variance about
//!   `s` with one extra pair at each of the five pair scores, divided by
//!   `N + 4`: without them a match whose pairs all scored the same (common
//!   here: both games won by the geese) would get a zero-width interval.
//!   This widens the interval slightly (96 pairs of a real match: [0.491,
//!   0.546] becomes [0.487, 0.549]); being a normal interval it still wants
//!   some tens of pairs.
//! * **The geese margin** (issue 29's measure that does not saturate): the
//!   result says who won, not by how much, and in Two Foxes the side decides
//!   most games, so two agents of different strength can score the same
//!   pairs. The geese the foxes take in a game (each `x` of a move is one
//!   capture) count the margin on a finer scale: a foxes' win takes 12, a
//!   geese win fewer the better the geese played. A player's pair margin is
//!   the geese it took as foxes minus the geese it lost as geese in the
//!   other game of the pair (positive: better on the board); its 95%
//!   interval is the normal one on the pairs' mean, `m ± z·sd/sqrt(N)`
//!   ([`Moments`]).
//!   The margin counts geese, not results, so a player can buy margin
//!   with draws (a search told to keep its geese at any price drew every
//!   geese game and was ahead on the margin, behind on the result).
//!   *Pairs by result, then margin* puts the result first: a pair is worth
//!   1 to the player who scored more of its 2 points, 0 to the other, and
//!   an even pair goes by the margin's sign (1/2 if it is 0); its 95%
//!   interval is the normal one on the pairs' mean. It agrees with the pair
//!   score wherever results differ and resolves the pairs they leave even.

/// `z` of a two-sided 95% normal interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wins, draws and losses of one player (or one player on one side).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Games won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost.
    pub losses: u64,
}

impl Record {
    /// Games played.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Adds one game: `result` is +1 win, 0 draw, -1 loss.
    pub fn add(&mut self, result: i32) {
        match result.signum() {
            1 => self.wins += 1,
            0 => self.draws += 1,
            _ => self.losses += 1,
        }
    }

    /// Points: a win 1, a draw 1/2.
    pub fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }

    /// The score in [0, 1]; 0.5 for no games.
    pub fn score(&self) -> f64 {
        score(self.wins, self.draws, self.losses)
    }

    /// The score's 95% Wilson interval (module docs), treating each game as
    /// independent; for game pairs [`PairRecord::interval`] is narrower.
    pub fn interval(&self) -> (f64, f64) {
        wilson_interval(self.score(), self.games(), Z95)
    }
}

/// One player's game pairs by pair score: `counts[k]` pairs scored `k / 4`
/// (k = 0: lost both, 1: a loss and a draw, 2: a win and a loss or two
/// draws, 3: a win and a draw, 4: won both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairRecord {
    /// Pairs per pair score, `counts[k]` for `k / 4`.
    pub counts: [u64; 5],
}

impl PairRecord {
    /// Adds a pair from the player's two game results (+1 win, 0 draw, -1 loss).
    pub fn add(&mut self, first: i32, second: i32) {
        let k = (first.signum() + second.signum() + 2) as usize;
        self.counts[k] += 1;
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The mean pair score (equal to the score over the paired games); 0.5 for none.
    pub fn score(&self) -> f64 {
        let n = self.pairs();
        if n == 0 {
            return 0.5;
        }
        let points: u64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(k, c)| k as u64 * c)
            .sum();
        points as f64 / (4 * n) as f64
    }

    /// The 95% interval of the score from the pairs (module docs); (0, 1)
    /// below two pairs.
    pub fn interval(&self) -> (f64, f64) {
        let n = self.pairs();
        if n < 2 {
            return (0.0, 1.0);
        }
        let mean = self.score();
        // One pseudo-pair at each pair score (module docs).
        let squares: f64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(k, &c)| (c + 1) as f64 * (k as f64 / 4.0 - mean).powi(2))
            .sum();
        let variance = squares / (n + 4) as f64;
        let half = Z95 * (variance / n as f64).sqrt();
        ((mean - half).max(0.0), (mean + half).min(1.0))
    }
}

/// The running mean and variance of a number per game or per pair
/// (Welford's update, numerically stable), with the normal 95% interval of
/// the mean.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    /// Values added.
    pub n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    /// Adds one value.
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// The mean; 0 for no values.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The sample standard deviation; 0 below two values.
    pub fn sd(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }

    /// The mean's 95% normal interval; unbounded below two values.
    pub fn interval(&self) -> (f64, f64) {
        if self.n < 2 {
            return (f64::NEG_INFINITY, f64::INFINITY);
        }
        let half = Z95 * self.sd() / (self.n as f64).sqrt();
        (self.mean - half, self.mean + half)
    }

    /// [`Moments::interval`] clipped to [0, 1], for a mean of values in
    /// [0, 1] (a share, such as pairs by result, then margin).
    pub fn share_interval(&self) -> (f64, f64) {
        let (lo, hi) = self.interval();
        (lo.max(0.0), hi.min(1.0))
    }
}

/// `(wins + draws / 2) / games`, or 0.5 when no game was played.
pub fn score(wins: u64, draws: u64, losses: u64) -> f64 {
    let n = wins + draws + losses;
    if n == 0 {
        0.5
    } else {
        (wins as f64 + draws as f64 / 2.0) / n as f64
    }
}

/// The Wilson score interval for score `s` over `n` games; (0, 1) for n = 0.
pub fn wilson_interval(s: f64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (s + z2 / (2.0 * n)) / denom;
    let half = z * (s * (1.0 - s) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    // At s = 0 (or 1) the bound is exactly 0 (1); rounding would leave a
    // tiny positive lower bound, i.e. a finite Elo of thousands.
    let lo = if s <= 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if s >= 1.0 {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (lo, hi)
}

/// Elo difference implied by a score: `-400 log10(1/s - 1)` (±infinity at 1 and 0).
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / s - 1.0).log10()
    }
}

/// Expected score of a player `elo` points stronger: `1 / (1 + 10^(-elo/400))`.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Formats an Elo value, `+inf`/`-inf` included.
pub fn fmt_elo(elo: f64) -> String {
    if elo.is_infinite() {
        if elo > 0.0 {
            "+inf".into()
        } else {
            "-inf".into()
        }
    } else if elo.round() == 0.0 {
        "+0".into()
    } else {
        format!("{elo:+.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_by_hand() {
        // 6 wins, 2 draws, 2 losses: 7 points of 10.
        let r = Record {
            wins: 6,
            draws: 2,
            losses: 2,
        };
        assert_eq!(r.games(), 10);
        assert!((r.score() - 0.7).abs() < 1e-12);
        // Wilson, z = 1.96, n = 10, s = 0.7:
        // denom = 1.38416, centre = 0.89208 / 1.38416 = 0.644492,
        // half = 1.96 * sqrt(0.021 + 0.009604) / 1.38416 = 0.247719.
        let (lo, hi) = wilson_interval(0.7, 10, 1.96);
        assert!((lo - 0.396773).abs() < 1e-5, "{lo}");
        assert!((hi - 0.892211).abs() < 1e-5, "{hi}");
        // -400 log10(3/7) = 147.19; -400 log10(1/3) = 190.85.
        assert!((elo_from_score(0.7) - 147.1907).abs() < 1e-3);
        assert!((elo_from_score(0.75) - 190.8485).abs() < 1e-3);
        assert_eq!(elo_from_score(0.5), 0.0);
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
        assert!((score_from_elo(elo_from_score(0.3)) - 0.3).abs() < 1e-12);
        // A clean sweep: the interval reaches 1 but not 0.
        let (lo, hi) = wilson_interval(1.0, 20, Z95);
        assert!(hi == 1.0 && lo > 0.8 && lo < 0.85, "{lo}");
        // A clean loss over 6 games: the lower bound is 0, so Elo -inf.
        let (lo, hi) = wilson_interval(0.0, 6, Z95);
        assert!(lo == 0.0 && (hi - 0.390).abs() < 1e-3, "[{lo}, {hi}]");
        assert_eq!(elo_from_score(lo), f64::NEG_INFINITY);
        assert_eq!(score(0, 0, 0), 0.5);
        assert_eq!(fmt_elo(f64::NEG_INFINITY), "-inf");
        assert_eq!(fmt_elo(147.19), "+147");
        assert_eq!(fmt_elo(-0.2), "+0");
    }

    #[test]
    fn pair_interval_worked_by_hand() {
        let mut p = PairRecord::default();
        // Pair scores 0.5, 0.5, 0.75, 0.25, 1.0.
        for (a, b) in [(1, -1), (0, 0), (1, 0), (-1, 0), (1, 1)] {
            p.add(a, b);
        }
        assert_eq!(p.counts, [0, 1, 2, 1, 1]);
        assert_eq!(p.pairs(), 5);
        // Mean 3/5 = 0.6. With a pseudo-pair at each score the counts are
        // 1, 2, 3, 2, 2 and the squared deviations from 0.6 sum to
        // 0.36 + 2 * 0.1225 + 3 * 0.01 + 2 * 0.0225 + 2 * 0.16 = 1.0;
        // variance 1.0 / 9; half width 1.959964 * sqrt(1 / 45) = 0.292175.
        assert!((p.score() - 0.6).abs() < 1e-12);
        let (lo, hi) = p.interval();
        assert!((lo - 0.307825).abs() < 1e-5, "{lo}");
        assert!((hi - 0.892175).abs() < 1e-5, "{hi}");
        // Every pair alike still leaves an interval.
        let mut even = PairRecord::default();
        for _ in 0..8 {
            even.add(1, -1);
        }
        let (lo, hi) = even.interval();
        assert!(lo < 0.4 && hi > 0.6, "[{lo}, {hi}]");
        assert_eq!(PairRecord::default().interval(), (0.0, 1.0));
        assert_eq!(PairRecord::default().score(), 0.5);
    }

    #[test]
    fn pairs_take_the_side_effect_out_of_the_interval() {
        // The geese win every game but six, which this player's foxes win:
        // 40 pairs, 34 even and 6 won (pairs [0.510, 0.640]). Same score,
        // but the game-by-game interval treats each game as a coin toss.
        let mut pairs = PairRecord::default();
        let mut games = Record::default();
        for i in 0..40 {
            let (as_foxes, as_geese) = if i < 6 { (1, 1) } else { (-1, 1) };
            pairs.add(as_foxes, as_geese);
            games.add(as_foxes);
            games.add(as_geese);
        }
        assert!((pairs.score() - games.score()).abs() < 1e-12);
        let (plo, phi) = pairs.interval();
        let (glo, ghi) = games.interval();
        assert!(plo > 0.5, "the pairs show the edge: [{plo}, {phi}]");
        assert!(glo < 0.5, "the games alone do not: [{glo}, {ghi}]");
        assert!(phi - plo < ghi - glo);
    }
}
