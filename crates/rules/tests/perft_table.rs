//! docs/rules.md's perft table from the start position, both boards, through depth
//! 6 with the engine; the independent reference (tests/reference/mod.rs)
//! reproduces the whole table; and the classic variants, every table
//! option, engine against reference.

mod reference;

use halatafl_rules::{perft, Position, Variant, START_FEN};
use reference::{Board, Rules};

const DEFAULT_BOARD: [u64; 6] = [6, 114, 778, 16208, 97210, 2092080];
const CORNER_LINKS: [u64; 6] = [6, 114, 792, 16678, 98146, 2152160];

fn table(corner_links: bool) -> (Variant, &'static str, [u64; 6]) {
    if corner_links {
        (
            Variant::two_foxes().with_corner_links(true),
            "two-foxes corner-links",
            CORNER_LINKS,
        )
    } else {
        (Variant::two_foxes(), "two-foxes", DEFAULT_BOARD)
    }
}

#[test]
fn engine_matches_rules_md_table_through_depth_6() {
    for corner_links in [false, true] {
        let (variant, name, nodes) = table(corner_links);
        let start = Position::start(variant);
        assert_eq!(start.fen(), START_FEN);
        for (i, &expected) in nodes.iter().enumerate() {
            let depth = i as u32 + 1;
            assert_eq!(perft(&start, depth), expected, "{name} depth {depth}");
        }
    }
}

#[test]
fn reference_matches_rules_md_table_through_depth_6() {
    for corner_links in [false, true] {
        let (_, name, nodes) = table(corner_links);
        let rules = Rules::parse(name);
        let start = Board::parse(START_FEN);
        for (i, &expected) in nodes.iter().enumerate() {
            let depth = i as u32 + 1;
            assert_eq!(
                reference::perft(&rules, &start, depth),
                expected,
                "reference {name} depth {depth}"
            );
        }
    }
}

/// Classic start positions, written out by hand from docs/rules.md (one fox on d4;
/// row 3 and the bottom arm; 15 adds a4 g4, 17 adds b4 f4 too).
const CLASSIC_STARTS: [(u8, &str); 3] = [
    (13, ".../.../......./...F.../GGGGGGG/GGG/GGG f 0"),
    (15, ".../.../......./G..F..G/GGGGGGG/GGG/GGG f 0"),
    (17, ".../.../......./GG.F.GG/GGGGGGG/GGG/GGG f 0"),
];

#[test]
fn classic_variants_match_reference() {
    for (geese, fen) in CLASSIC_STARTS {
        for sideways in [false, true] {
            for corner_links in [false, true] {
                let variant = Variant::classic(geese, sideways)
                    .unwrap()
                    .with_corner_links(corner_links);
                let start = Position::start(variant);
                assert_eq!(start.fen(), fen, "{variant} start");
                let rules = Rules::parse(&variant.to_string());
                let board = Board::parse(fen);
                for depth in 1..=6 {
                    assert_eq!(
                        perft(&start, depth),
                        reference::perft(&rules, &board, depth),
                        "{variant} depth {depth}"
                    );
                }
            }
        }
    }
}

#[test]
fn make_unmake_counts_and_restores_like_copy_make() {
    use halatafl_rules::{perft, perft_make_unmake, Position, Variant};
    for variant in [
        Variant::two_foxes(),
        Variant::classic(17, true).unwrap().with_corner_links(true),
    ] {
        let start = Position::start(variant);
        let mut p = start;
        assert_eq!(perft_make_unmake(&mut p, 5), perft(&start, 5));
        assert_eq!(p, start, "make/unmake must restore the position exactly");
    }
}
