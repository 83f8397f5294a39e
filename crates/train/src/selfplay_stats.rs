//! What self-play counts: the totals of a generation's games, or of one
//! shard's games, which the asynchronous workers store in the shard's
//! header (so shards and the self-play loop both use it, and it depends on
//! neither).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Totals of one generation's self-play (or of one shard's games, which the
/// asynchronous workers store in the shard's header).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfPlayStats {
    /// Games finished.
    pub games: usize,
    /// Samples the games gave.
    pub samples: usize,
    /// Plies played over all games.
    pub plies: usize,
    /// Games the foxes won.
    pub foxes_wins: usize,
    /// Games the geese won.
    pub geese_wins: usize,
    /// Drawn games, those adjudicated at `selfplay.max_plies` included.
    pub draws: usize,
    /// Games per end reason (a docs/rules.md reason, `resigned` or
    /// `max-plies`).
    pub reasons: BTreeMap<String, usize>,
    /// Games that would have resigned but were played out to check.
    pub resign_checked: usize,
    /// Of those, the games the would-be resigner did not lose: resigning
    /// would have been wrong.
    pub resign_false: usize,
    /// Wall-clock seconds the games took (summed over batches when merged).
    pub seconds: f64,
    /// Games that began at a drawn position (`selfplay.start_suite_fraction`,
    /// `selfplay.start_position_fraction`) rather than at the start.
    #[serde(default)]
    pub drawn_starts: usize,
    /// Games against `selfplay.opponent` (counted in the totals above too) ...
    #[serde(default)]
    pub opponent_games: usize,
    /// ... and how many of them the network won or drew.
    #[serde(default)]
    pub opponent_not_lost: usize,
    /// Games that began in an earlier generation (`selfplay.carry_over`).
    #[serde(default)]
    pub carried_in: usize,
    /// Plies played in these games' time, by the finished games and by
    /// those left running. With `selfplay.carry_over`, `plies` counts a
    /// carried game's whole length where it finishes; this counts each ply
    /// where it was played, so it is the one to divide by `seconds`.
    /// 0 in the headers of shards written before it existed.
    #[serde(default)]
    pub plies_played: usize,
    /// Samples whose value target a proof search settled
    /// (`selfplay.prove_targets`).
    #[serde(default)]
    pub proven_samples: usize,
    /// Of those, samples whose policy target `selfplay.prove_policy` moved
    /// off moves not proven to keep the win.
    #[serde(default)]
    pub proven_policies: usize,
}

impl SelfPlayStats {
    /// Adds another batch's totals (times add up: worker-seconds).
    pub fn merge(&mut self, other: &SelfPlayStats) {
        self.games += other.games;
        self.samples += other.samples;
        self.plies += other.plies;
        self.foxes_wins += other.foxes_wins;
        self.geese_wins += other.geese_wins;
        self.draws += other.draws;
        for (reason, n) in &other.reasons {
            *self.reasons.entry(reason.clone()).or_default() += n;
        }
        self.resign_checked += other.resign_checked;
        self.resign_false += other.resign_false;
        self.seconds += other.seconds;
        self.drawn_starts += other.drawn_starts;
        self.opponent_games += other.opponent_games;
        self.opponent_not_lost += other.opponent_not_lost;
        self.carried_in += other.carried_in;
        self.plies_played += other.plies_played;
        self.proven_samples += other.proven_samples;
        self.proven_policies += other.proven_policies;
    }
}
