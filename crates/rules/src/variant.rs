//! Game variants: Two Foxes (the default) and classic Fox and Geese, with their
//! table options, as one runtime value so one engine serves both.

use crate::bitboard::Bitboard;
use crate::point::Point;
use std::fmt;

/// The two games; the other table options are fields of [`Variant`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum VariantKind {
    /// Halatafl: two foxes, twenty geese, compulsory maximal capture chains, pen rule.
    TwoFoxes,
    /// Fox and Geese: one fox, 13/15/17 geese, optional captures, no pen.
    Classic,
}

/// Which game is played, with every table option. Small and `Copy`: every
/// [`crate::Position`] carries its variant.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Variant {
    /// Two Foxes or the classic game: the pieces and the end rules.
    pub kind: VariantKind,
    /// Join the four inner-corner pairs (`c6-b5`, `e6-f5`, `b3-c2`, `f3-e2`).
    pub corner_links: bool,
    /// Geese at the start (20 in Two Foxes; 13, 15 or 17 in the classic game).
    pub geese: u8,
    /// Geese may step sideways (always in Two Foxes; an option in the classic game).
    pub sideways: bool,
}

/// The nine points of the top arm, which the geese must fill in Two Foxes.
pub const PEN: Bitboard = {
    let mut bits = 0u64;
    let mut row = 4;
    while row < 7 {
        let mut file = 2;
        while file < 5 {
            bits |= 1 << (row * 7 + file);
            file += 1;
        }
        row += 1;
    }
    Bitboard(bits)
};

fn points(names: &[&str]) -> Bitboard {
    names.iter().fold(Bitboard::EMPTY, |b, n| {
        b.with(Point::parse(n).expect("start-position table names real points"))
    })
}

impl Default for Variant {
    fn default() -> Variant {
        Variant::two_foxes()
    }
}

impl Variant {
    /// Two Foxes as docs/rules.md plays it by default: twenty geese that may
    /// step sideways, no corner links.
    pub const fn two_foxes() -> Variant {
        Variant {
            kind: VariantKind::TwoFoxes,
            corner_links: false,
            geese: 20,
            sideways: true,
        }
    }

    /// Classic Fox and Geese with 13, 15 or 17 geese.
    pub fn classic(geese: u8, sideways: bool) -> Result<Variant, String> {
        if !matches!(geese, 13 | 15 | 17) {
            return Err(format!(
                "classic Fox and Geese is played with 13, 15 or 17 geese, not {geese}"
            ));
        }
        Ok(Variant {
            kind: VariantKind::Classic,
            corner_links: false,
            geese,
            sideways,
        })
    }

    /// The same game on the board with (`true`) or without the corner links.
    pub const fn with_corner_links(mut self, on: bool) -> Variant {
        self.corner_links = on;
        self
    }

    /// Whether this is classic Fox and Geese.
    #[inline]
    pub const fn is_classic(self) -> bool {
        matches!(self.kind, VariantKind::Classic)
    }

    /// Whether no position can occur twice in a game: classic Fox and
    /// Geese without sideways steps, where every goose move raises the
    /// geese's summed rows and every capture lowers their count. There the
    /// game is a DAG, repetition draws cannot happen, and a position's
    /// value does not depend on the game's history.
    #[inline]
    pub const fn no_position_recurs(self) -> bool {
        self.is_classic() && !self.sideways
    }

    /// Number of foxes on the board (foxes are never captured).
    #[inline]
    pub const fn foxes(self) -> u32 {
        match self.kind {
            VariantKind::TwoFoxes => 2,
            VariantKind::Classic => 1,
        }
    }

    /// The foxes win when fewer geese than this remain.
    #[inline]
    pub const fn geese_needed(self) -> u32 {
        match self.kind {
            VariantKind::TwoFoxes => 9,
            VariantKind::Classic => 4,
        }
    }

    /// Whether the pen rule (rule 2) applies.
    #[inline]
    pub const fn has_pen(self) -> bool {
        matches!(self.kind, VariantKind::TwoFoxes)
    }

    /// Two Foxes: captures are compulsory and chains run to the end. Classic:
    /// both optional, and a chain may stop after any jump.
    #[inline]
    pub const fn compulsory_capture(self) -> bool {
        matches!(self.kind, VariantKind::TwoFoxes)
    }

    /// Start placement: (foxes, geese).
    pub fn start_pieces(self) -> (Bitboard, Bitboard) {
        match self.kind {
            VariantKind::TwoFoxes => (
                points(&["c7", "e7"]),
                points(&[
                    "a4", "b4", "c4", "d4", "e4", "f4", "g4", "a3", "b3", "c3", "d3", "e3", "f3",
                    "g3", "c2", "d2", "e2", "c1", "d1", "e1",
                ]),
            ),
            VariantKind::Classic => {
                let mut geese = points(&[
                    "a3", "b3", "c3", "d3", "e3", "f3", "g3", "c2", "d2", "e2", "c1", "d1", "e1",
                ]);
                if self.geese >= 15 {
                    geese |= points(&["a4", "g4"]);
                }
                if self.geese >= 17 {
                    geese |= points(&["b4", "f4"]);
                }
                (points(&["d4"]), geese)
            }
        }
    }

    /// Short name used in CSV files and configs.
    pub fn name(self) -> &'static str {
        match self.kind {
            VariantKind::TwoFoxes => "two-foxes",
            VariantKind::Classic => "classic",
        }
    }
}

/// `two-foxes`, `two-foxes corner-links`, `classic geese=15 sideways`, ...: the
/// same words the engine protocol's `variant` command takes.
impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        if self.is_classic() {
            write!(f, " geese={}", self.geese)?;
            if self.sideways {
                f.write_str(" sideways")?;
            }
        }
        if self.corner_links {
            f.write_str(" corner-links")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Variant {
    type Err = String;

    /// Parses the [`Display`](fmt::Display) form: a variant name followed by
    /// options `corner-links`, `sideways`, `geese=N` (words or commas between).
    /// Each option may appear once: a repeated one is refused rather than
    /// letting the last win, as the command-line flags allow each once too.
    fn from_str(text: &str) -> Result<Variant, String> {
        let mut words = text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty());
        let name = words
            .next()
            .ok_or("empty variant: expected `two-foxes` or `classic`")?;
        let mut variant = match name {
            "two-foxes" | "halatafl" => Variant::two_foxes(),
            "classic" | "fox-and-geese" => Variant::classic(13, false)?,
            other => {
                return Err(format!(
                    "unknown variant `{other}`: expected `two-foxes` or `classic`"
                ))
            }
        };
        let mut seen: Vec<&str> = Vec::new();
        for word in words {
            let key = word.split_once('=').map_or(word, |(key, _)| key);
            if seen.contains(&key) {
                return Err(format!(
                    "option `{key}` given twice in `{}`: give each option once",
                    text.trim()
                ));
            }
            seen.push(key);
            match word {
                "corner-links" => variant.corner_links = true,
                "sideways" if variant.is_classic() => variant.sideways = true,
                w if w.starts_with("geese=") && variant.is_classic() => {
                    let n: u8 = w[6..]
                        .parse()
                        .map_err(|_| format!("bad goose count in `{w}`"))?;
                    variant = Variant::classic(n, variant.sideways)?
                        .with_corner_links(variant.corner_links);
                }
                w => {
                    return Err(format!(
                        "unknown option `{w}` for {name}: expected {}",
                        if variant.is_classic() {
                            "`geese=13|15|17`, `sideways` or `corner-links`"
                        } else {
                            "`corner-links`"
                        }
                    ))
                }
            }
        }
        Ok(variant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pen_and_starts() {
        assert_eq!(PEN.count(), 9);
        assert_eq!(Variant::two_foxes().start_pieces().1.count(), 20);
        for n in [13u8, 15, 17] {
            let v = Variant::classic(n, true).unwrap();
            assert_eq!(v.start_pieces().1.count(), n as u32);
            assert_eq!(v.to_string().parse::<Variant>().unwrap(), v);
        }
        assert!(Variant::classic(14, false).is_err());
        let v = Variant::two_foxes().with_corner_links(true);
        assert_eq!(v.to_string().parse::<Variant>().unwrap(), v);
        assert!("two-foxes sideways".parse::<Variant>().is_err());
    }

    #[test]
    fn repeated_options_are_refused() {
        for (text, key) in [
            ("classic geese=15 geese=17", "geese"),
            ("classic,sideways,geese=15,sideways", "sideways"),
            ("two-foxes corner-links corner-links", "corner-links"),
        ] {
            let err = text.parse::<Variant>().unwrap_err();
            assert!(
                err.starts_with(&format!("option `{key}` given twice in `{text}`")),
                "{text}: {err}"
            );
        }
        assert_eq!(
            "classic geese=15 sideways corner-links".parse::<Variant>(),
            Ok(Variant::classic(15, true).unwrap().with_corner_links(true))
        );
    }
}
