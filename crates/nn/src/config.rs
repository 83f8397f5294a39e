//! Network shapes, with named presets in KataGo's style (`b6c64`: 6 residual
//! blocks of 64 channels).

use crate::targets::{AuxHeads, AuxTarget};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Residual blocks a network may have (the largest preset used is b10c128).
pub const BLOCKS: std::ops::RangeInclusive<i64> = 1..=40;
/// Channels of the tower's convolutions.
pub const CHANNELS: std::ops::RangeInclusive<i64> = 4..=512;
/// Channels or width of a head layer (presets use 4 to 256).
pub const HEAD_CHANNELS: std::ops::RangeInclusive<i64> = 1..=512;

/// A network's shape: tower depth and width, head sizes, and which auxiliary
/// heads it has. Stored in every checkpoint's metadata; displayed as its
/// preset name `b<blocks>c<channels>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetConfig {
    /// Residual blocks in the tower.
    pub blocks: usize,
    /// Channels of every tower convolution.
    pub channels: i64,
    /// Channels of the policy head's hidden 1x1 convolution.
    pub policy_channels: i64,
    /// Channels of the value head's 1x1 convolution.
    pub value_channels: i64,
    /// Width of the value head's hidden fully connected layer.
    pub value_hidden: i64,
    /// The auxiliary heads ([`crate::targets`]), each with the value head's
    /// sizes, so a preset needs no new ones. None in every preset; written
    /// as `<target>_head: true` keys beside the sizes, so a network without
    /// any keeps the metadata networks always had. Any other key is refused
    /// (this field reads every key the sizes do not).
    #[serde(flatten)]
    pub heads: AuxHeads,
}

impl Default for NetConfig {
    /// The `b6c64` preset.
    fn default() -> NetConfig {
        NetConfig::preset(6, 64)
    }
}

impl NetConfig {
    /// Heads scale with the tower but stay small: the board has 49 cells.
    pub fn preset(blocks: usize, channels: i64) -> NetConfig {
        NetConfig {
            blocks,
            channels,
            policy_channels: (channels / 2).clamp(16, 64),
            value_channels: (channels / 8).clamp(4, 16),
            value_hidden: channels.saturating_mul(2).clamp(32, 256),
            heads: AuxHeads::NONE,
        }
    }

    /// The same network with `target`'s head on or off.
    pub fn with_head(self, target: AuxTarget, on: bool) -> NetConfig {
        NetConfig {
            heads: self.heads.with(target, on),
            ..self
        }
    }

    /// The same network without auxiliary heads: what must match for a
    /// checkpoint to continue a run (heads can be added on the way).
    pub fn without_heads(self) -> NetConfig {
        NetConfig {
            heads: AuxHeads::NONE,
            ..self
        }
    }

    /// Parses a preset name `b<blocks>c<channels>` such as `b4c32`, `b6c64`.
    pub fn parse_preset(name: &str) -> Result<NetConfig, String> {
        let bad = || {
            format!("unknown network preset `{name}`: expected b<blocks>c<channels>, e.g. b2c16, b4c32, b6c64, b10c128")
        };
        let rest = name.strip_prefix('b').ok_or_else(bad)?;
        let (b, c) = rest.split_once('c').ok_or_else(bad)?;
        let blocks: usize = b.parse().map_err(|_| bad())?;
        let channels: i64 = c.parse().map_err(|_| bad())?;
        let config = NetConfig::preset(blocks, channels);
        config
            .validate()
            .map_err(|why| format!("network preset `{name}`: {why}"))?;
        Ok(config)
    }

    /// Checks every size against [`BLOCKS`], [`CHANNELS`] and
    /// [`HEAD_CHANNELS`]. Presets are checked here and so is the config a
    /// checkpoint's metadata claims, before a single tensor is allocated: a
    /// damaged or hostile file must not make libtorch try to allocate
    /// terabytes (which aborts the process instead of returning an error).
    pub fn validate(&self) -> Result<(), String> {
        // A usize beyond i64 is out of range anyway: saturate, do not wrap.
        let blocks = i64::try_from(self.blocks).unwrap_or(i64::MAX);
        let sizes = [
            ("blocks", blocks, &BLOCKS),
            ("channels", self.channels, &CHANNELS),
            ("policy_channels", self.policy_channels, &HEAD_CHANNELS),
            ("value_channels", self.value_channels, &HEAD_CHANNELS),
            ("value_hidden", self.value_hidden, &HEAD_CHANNELS),
        ];
        for (name, value, range) in sizes {
            if !range.contains(&value) {
                return Err(format!(
                    "{name} = {value}: must be in {}..={}",
                    range.start(),
                    range.end()
                ));
            }
        }
        Ok(())
    }

    /// Multiply-adds x2 for one position's forward pass (convolutions and
    /// linear layers; batch norm and activations are not counted).
    pub fn flops_per_position(&self) -> f64 {
        let cells = crate::encoding::GRID as f64;
        let conv = |cin: i64, cout: i64, k: i64| 2.0 * (cin * cout * k * k) as f64 * cells;
        let c = self.channels;
        let mut f = conv(crate::encoding::INPUT_PLANES as i64, c, 3);
        f += self.blocks as f64 * 2.0 * conv(c, c, 3);
        f += conv(c, self.policy_channels, 1)
            + conv(
                self.policy_channels,
                crate::encoding::POLICY_PLANES as i64,
                1,
            );
        let value_head = conv(c, self.value_channels, 1)
            + 2.0 * self.value_channels as f64 * cells * self.value_hidden as f64;
        f += value_head + 2.0 * self.value_hidden as f64 * 3.0;
        // Each auxiliary head has the value head's shape with one output.
        let aux_head = value_head + 2.0 * self.value_hidden as f64;
        f += aux_head * self.heads.iter().count() as f64;
        f
    }
}

impl fmt::Display for NetConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b{}c{}", self.blocks, self.channels)
    }
}
