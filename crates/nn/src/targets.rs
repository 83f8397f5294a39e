//! Auxiliary training targets, declared once.
//!
//! Beside the policy and the win/draw/loss value, a network may carry
//! auxiliary heads, each predicting one number per position that a finished
//! game reveals (Leela Chess Zero's moves-left head, KataGo's score and
//! ownership predictions are of this kind). Everything the rest of the
//! workbench needs to know about such a target is declared here, in
//! [`AuxTarget`]'s [`TargetSpec`] and its [`AuxTarget::label`] rule: the name
//! its tensors, config keys and log lines use, the scale that makes its
//! target of order one, the Huber delta of its loss, the tag it is stored
//! under in sample shards, and how its label follows from a finished game.
//!
//! The plumbing is generic over [`AuxTarget::ALL`]: samples carry a
//! [`PerTarget`] of labels, shards store `(tag, value)` pairs, the model
//! builds one [`crate::model::AuxHead`] (the value head's shape with one
//! output) per target its [`NetConfig`](crate::NetConfig) asks for, the
//! trainer adds each head's weighted Huber loss over the samples that have a
//! label, checkpoints record which heads a network has as `<key>_head` and
//! their loss weights as `<key>_weight`, and inference returns each head's
//! prediction in the target's own units. Adding a target therefore means a
//! variant and its spec here, the run config's two keys
//! (`[network] <key>_head`, `[train] <key>_weight`), whatever a new label
//! needs from the game in [`GameEnd`] and, if a search is to use the
//! prediction, that search's side.

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Index, IndexMut};

/// An auxiliary training target (one head of the network, when asked for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AuxTarget {
    /// Plies from the position to the end of its game (Leela Chess Zero's
    /// moves-left head, MLH, 2020). Known only for games the rules ended: a
    /// resigned game ends where a player gave up, and a game cut at
    /// `max_plies` ends where the cut falls, which nothing in the position
    /// shows; samples of such games have no label and do not train the head.
    MovesLeft,
    /// Geese the foxes take from the position to the end of its game, a
    /// count that does not depend on who is to move: KataGo's score head,
    /// with Two Foxes' own score (the geese margin of `halatafl summary`
    /// counts the same geese). Known for games the rules ended and for
    /// games cut at `max_plies` (what was taken up to the cut is what the
    /// game counts); a resigned game's remaining captures are not, and its
    /// samples have no label. A search reads the prediction through its
    /// material utility ([`halatafl_mcts::Evaluations::set_material_left`]).
    GeeseTaken,
}

/// What a target is, for everything that handles it generically.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TargetSpec {
    /// Snake-case name: the head's tensor prefix (`moves_left.fc.weight`),
    /// the run config's and checkpoint metadata's keys (`moves_left_head`,
    /// `moves_left_weight`).
    pub key: &'static str,
    /// Words for logs and errors (`moves-left`).
    pub label: &'static str,
    /// The loss term's name in logs and errors (`moves-left loss`).
    pub loss_name: &'static str,
    /// The tag a label is stored under in sample shards. Never reused for
    /// another target: old shards keep their meaning.
    pub shard_tag: u8,
    /// The head predicts the label divided by this, so that its target is
    /// of order one like the other heads'.
    pub scale: f64,
    /// Huber delta of the head's loss, in scaled units: squared error for the
    /// usual misses, linear beyond, so rare extreme labels do not dominate
    /// the head's gradient.
    pub huber_delta: f64,
    /// The least a prediction may be read back as, in the label's units (a
    /// count cannot be negative); `None`: unbounded.
    pub floor: Option<f64>,
}

const MOVES_LEFT: TargetSpec = TargetSpec {
    key: "moves_left",
    label: "moves-left",
    loss_name: "moves-left loss",
    shard_tag: 1,
    // Games last tens to a few hundred plies.
    scale: 100.0,
    // 50 plies: the few very long games (drawn at hundreds of plies) stay
    // in the linear part.
    huber_delta: 0.5,
    floor: Some(0.0),
};

const GEESE_TAKEN: TargetSpec = TargetSpec {
    key: "geese_taken",
    label: "geese-taken",
    loss_name: "geese-taken loss",
    shard_tag: 2,
    // From the start of a game the foxes take 0 to 13 geese (a game of
    // Two Foxes ends when fewer than 9 of 20 are left), 4 to 8 commonly.
    scale: 8.0,
    // 8 geese: every realistic miss is in the squared part.
    huber_delta: 1.0,
    floor: Some(0.0),
};

/// How a finished game ended, as seen from one of its sample positions:
/// what [`AuxTarget::label`] derives every label from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameEnd {
    /// Plies from the sample's position to the game's last position (1 for
    /// the position before the last move).
    pub plies_to_end: u32,
    /// Whether the rules ended the game (not a resignation, not a cut at
    /// the ply limit).
    pub ended_by_rules: bool,
    /// Geese taken from the sample's position to the game's last position;
    /// `None` for a resigned game, whose rest was not played.
    pub geese_taken_to_end: Option<u32>,
}

impl AuxTarget {
    /// Every target, in the order heads are built and reported.
    pub const ALL: [AuxTarget; 2] = [AuxTarget::MovesLeft, AuxTarget::GeeseTaken];
    /// Number of targets.
    pub const COUNT: usize = AuxTarget::ALL.len();

    /// The target's declaration.
    pub const fn spec(self) -> &'static TargetSpec {
        match self {
            AuxTarget::MovesLeft => &MOVES_LEFT,
            AuxTarget::GeeseTaken => &GEESE_TAKEN,
        }
    }

    /// The label of a sample whose game ended as `end` says, in the
    /// target's units; `None` where the game does not reveal it.
    pub fn label(self, end: GameEnd) -> Option<f32> {
        match self {
            // Stored as u16 before shards held labels as floats: the same
            // bound keeps the same labels.
            AuxTarget::MovesLeft => (end.ended_by_rules && end.plies_to_end <= u16::MAX as u32)
                .then_some(end.plies_to_end as f32),
            AuxTarget::GeeseTaken => end.geese_taken_to_end.map(|n| n as f32),
        }
    }

    /// Every target's label for a sample whose game ended as `end` says.
    pub fn labels(end: GameEnd) -> PerTarget<Option<f32>> {
        PerTarget::from_fn(|t| t.label(end))
    }

    /// The target stored under `tag` in shards.
    pub fn from_shard_tag(tag: u8) -> Option<AuxTarget> {
        AuxTarget::ALL
            .into_iter()
            .find(|t| t.spec().shard_tag == tag)
    }

    /// The run config's and checkpoint's key for the head: `<key>_head`.
    pub fn head_key(self) -> String {
        format!("{}_head", self.spec().key)
    }

    /// The run config's and checkpoint's key for the loss weight:
    /// `<key>_weight`.
    pub fn weight_key(self) -> String {
        format!("{}_weight", self.spec().key)
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for AuxTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec().label)
    }
}

/// One value per auxiliary target, indexed by [`AuxTarget`]: a sample's
/// labels, a batch's loss terms, a network's predictions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct PerTarget<T>([T; AuxTarget::COUNT]);

impl<T> PerTarget<T> {
    /// The value of every target from `f`.
    pub fn from_fn(mut f: impl FnMut(AuxTarget) -> T) -> PerTarget<T> {
        PerTarget(std::array::from_fn(|i| f(AuxTarget::ALL[i])))
    }

    /// Every target with its value.
    pub fn iter(&self) -> impl Iterator<Item = (AuxTarget, &T)> {
        AuxTarget::ALL.into_iter().zip(self.0.iter())
    }

    /// Every target with its value, mutably.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (AuxTarget, &mut T)> {
        AuxTarget::ALL.into_iter().zip(self.0.iter_mut())
    }

    /// The value of `t`, the others dropped.
    pub fn take(self, t: AuxTarget) -> T {
        self.0
            .into_iter()
            .nth(t.index())
            .expect("one value per target")
    }

    /// Each value through `f`.
    pub fn map<U>(self, mut f: impl FnMut(AuxTarget, T) -> U) -> PerTarget<U> {
        let mut values = self.0.into_iter();
        PerTarget::from_fn(|t| f(t, values.next().expect("one value per target")))
    }
}

impl<T> Index<AuxTarget> for PerTarget<T> {
    type Output = T;
    fn index(&self, t: AuxTarget) -> &T {
        &self.0[t.index()]
    }
}

impl<T> IndexMut<AuxTarget> for PerTarget<T> {
    fn index_mut(&mut self, t: AuxTarget) -> &mut T {
        &mut self.0[t.index()]
    }
}

/// Serialised as a map from each target's key to its value (loss logs).
impl<T: Serialize> Serialize for PerTarget<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(AuxTarget::COUNT))?;
        for (t, v) in self.iter() {
            map.serialize_entry(t.spec().key, v)?;
        }
        map.end()
    }
}

/// The auxiliary heads a network has. In a checkpoint's `net` metadata each
/// head present is a key `<key>_head: true` beside the tower's sizes (it is
/// `#[serde(flatten)]`ed into [`NetConfig`](crate::NetConfig)); heads absent
/// write nothing, so a network without any has the metadata networks had
/// before heads existed, and a key naming no known head is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct AuxHeads(PerTarget<bool>);

impl AuxHeads {
    /// No auxiliary head.
    pub const NONE: AuxHeads = AuxHeads(PerTarget([false; AuxTarget::COUNT]));

    /// Whether the head of `t` is present.
    pub fn has(&self, t: AuxTarget) -> bool {
        self.0[t]
    }

    /// The same heads with `t`'s on or off.
    pub fn with(mut self, t: AuxTarget, on: bool) -> AuxHeads {
        self.0[t] = on;
        self
    }

    /// The targets whose heads are present, in [`AuxTarget::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = AuxTarget> + '_ {
        self.0.iter().filter(|(_, on)| **on).map(|(t, _)| t)
    }
}

impl Serialize for AuxHeads {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for t in self.iter() {
            map.serialize_entry(&t.head_key(), &true)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for AuxHeads {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AuxHeads, D::Error> {
        let on: PerTarget<Option<bool>> = d.deserialize_map(KeyedVisitor {
            suffix: "_head",
            what: "network sizes or `<target>_head` flags",
            value: std::marker::PhantomData,
        })?;
        Ok(AuxHeads(on.map(|_, v| v.unwrap_or(false))))
    }
}

/// The loss weight of each auxiliary head (0: the head, if any, is not
/// trained). In a checkpoint's `train` metadata each nonzero weight is a key
/// `<key>_weight` (flattened into [`TrainConfig`](crate::TrainConfig)); zero
/// weights write nothing, so a run without auxiliary heads has the metadata
/// runs had before they existed.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct AuxWeights(pub PerTarget<f64>);

impl Index<AuxTarget> for AuxWeights {
    type Output = f64;
    fn index(&self, t: AuxTarget) -> &f64 {
        &self.0[t]
    }
}

impl IndexMut<AuxTarget> for AuxWeights {
    fn index_mut(&mut self, t: AuxTarget) -> &mut f64 {
        &mut self.0[t]
    }
}

impl Serialize for AuxWeights {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (t, &w) in self.0.iter() {
            if w != 0.0 {
                map.serialize_entry(&t.weight_key(), &w)?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for AuxWeights {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AuxWeights, D::Error> {
        let weights: PerTarget<Option<f64>> = d.deserialize_map(KeyedVisitor {
            suffix: "_weight",
            what: "training settings or `<target>_weight` loss weights",
            value: std::marker::PhantomData,
        })?;
        Ok(AuxWeights(weights.map(|_, w| w.unwrap_or(0.0))))
    }
}

/// Reads the keys left over by a flattening struct: each must be
/// `<target key><suffix>`; any other is refused as an unknown field, which
/// is what `deny_unknown_fields` would have said (serde cannot combine it
/// with `flatten`).
struct KeyedVisitor<V> {
    suffix: &'static str,
    what: &'static str,
    value: std::marker::PhantomData<V>,
}

impl<'de, V: Deserialize<'de>> Visitor<'de> for KeyedVisitor<V> {
    type Value = PerTarget<Option<V>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: PerTarget<Option<V>> = PerTarget::from_fn(|_| None);
        while let Some(key) = map.next_key::<String>()? {
            let target = AuxTarget::ALL
                .into_iter()
                .find(|t| key.strip_suffix(self.suffix) == Some(t.spec().key));
            let Some(target) = target else {
                return Err(de::Error::custom(format_args!(
                    "unknown field `{key}` (expected {})",
                    self.what
                )));
            };
            if out[target].is_some() {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            out[target] = Some(map.next_value()?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_has_a_distinct_key_and_shard_tag_and_a_positive_scale() {
        for (i, a) in AuxTarget::ALL.into_iter().enumerate() {
            assert_eq!(a.index(), i, "ALL is in declaration order");
            assert!(a.spec().scale > 0.0 && a.spec().huber_delta > 0.0);
            assert_eq!(AuxTarget::from_shard_tag(a.spec().shard_tag), Some(a));
            for b in &AuxTarget::ALL[i + 1..] {
                assert_ne!(a.spec().key, b.spec().key);
                assert_ne!(a.spec().shard_tag, b.spec().shard_tag);
            }
        }
        assert_eq!(AuxTarget::from_shard_tag(0), None);
    }

    #[test]
    fn moves_left_is_known_only_for_games_the_rules_ended() {
        let end = |plies_to_end, ended_by_rules| GameEnd {
            plies_to_end,
            ended_by_rules,
            geese_taken_to_end: Some(3),
        };
        assert_eq!(AuxTarget::MovesLeft.label(end(7, true)), Some(7.0));
        assert_eq!(AuxTarget::MovesLeft.label(end(7, false)), None);
        assert_eq!(AuxTarget::MovesLeft.label(end(70_000, true)), None);
    }

    #[test]
    fn geese_taken_is_known_unless_the_game_was_resigned() {
        let end = |geese_taken_to_end| GameEnd {
            plies_to_end: 7,
            ended_by_rules: false,
            geese_taken_to_end,
        };
        assert_eq!(AuxTarget::GeeseTaken.label(end(Some(0))), Some(0.0));
        assert_eq!(AuxTarget::GeeseTaken.label(end(Some(4))), Some(4.0));
        assert_eq!(AuxTarget::GeeseTaken.label(end(None)), None);
    }

    #[test]
    fn heads_and_weights_round_trip_through_their_keys_and_refuse_others() {
        let heads = AuxHeads::NONE.with(AuxTarget::MovesLeft, true);
        let json = serde_json::to_string(&heads).unwrap();
        assert_eq!(json, r#"{"moves_left_head":true}"#);
        assert_eq!(serde_json::from_str::<AuxHeads>(&json).unwrap(), heads);
        assert_eq!(serde_json::to_string(&AuxHeads::NONE).unwrap(), "{}");
        let err = serde_json::from_str::<AuxHeads>(r#"{"moves_right_head":true}"#).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `moves_right_head`"),
            "{err}"
        );

        let mut weights = AuxWeights::default();
        assert_eq!(serde_json::to_string(&weights).unwrap(), "{}");
        weights[AuxTarget::MovesLeft] = 0.25;
        let json = serde_json::to_string(&weights).unwrap();
        assert_eq!(json, r#"{"moves_left_weight":0.25}"#);
        assert_eq!(serde_json::from_str::<AuxWeights>(&json).unwrap(), weights);
        let err = serde_json::from_str::<AuxWeights>(r#"{"moves_left_head":1.0}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field"), "{err}");
    }
}
