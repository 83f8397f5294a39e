//! The variant and position flags shared by every subcommand.

use anyhow::Result;
use clap::{Args, ValueEnum};
use halatafl_rules::{Position, Variant};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum VariantName {
    /// Two Foxes (Halatafl): two foxes, twenty geese, compulsory captures, pen.
    TwoFoxes,
    /// Classic Fox and Geese: one fox, 13/15/17 geese, optional captures.
    Classic,
}

#[derive(Args, Clone, Debug)]
pub struct VariantArgs {
    /// Game to play.
    #[arg(long, value_enum, default_value = "two-foxes")]
    pub variant: VariantName,
    /// Join the four inner-corner pairs (c6-b5, e6-f5, b3-c2, f3-e2) by diagonals.
    #[arg(long)]
    pub corner_links: bool,
    /// Classic only: number of geese at the start (13, 15 adds a4 g4, 17 adds b4 f4 too).
    #[arg(long)]
    pub geese: Option<u8>,
    /// Classic only: geese may also step sideways (always allowed in Two Foxes).
    #[arg(long)]
    pub sideways: bool,
}

impl VariantArgs {
    pub fn variant(&self) -> Result<Variant> {
        let v = match self.variant {
            VariantName::TwoFoxes => {
                anyhow::ensure!(
                    self.geese.is_none() && !self.sideways,
                    "--geese and --sideways are options of --variant classic"
                );
                Variant::two_foxes()
            }
            VariantName::Classic => Variant::classic(self.geese.unwrap_or(13), self.sideways)
                .map_err(anyhow::Error::msg)?,
        };
        Ok(v.with_corner_links(self.corner_links))
    }
}

#[derive(Args, Clone, Debug)]
pub struct PositionArgs {
    #[command(flatten)]
    pub variant: VariantArgs,
    /// Position string (docs/rules.md), e.g. "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 0"; default: the start.
    #[arg(long)]
    pub fen: Option<String>,
}

impl PositionArgs {
    pub fn position(&self) -> Result<Position> {
        let variant = self.variant.variant()?;
        match &self.fen {
            None => Ok(Position::start(variant)),
            Some(text) => Position::from_fen(text, variant).map_err(|e| {
                let quoted = halatafl_rules::excerpt(text, e.column());
                anyhow::Error::new(e).context(format!("bad --fen \"{quoted}\""))
            }),
        }
    }
}
