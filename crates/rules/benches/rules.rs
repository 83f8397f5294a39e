//! Rules-engine throughput: perft from the start (last ply counted in bulk) and
//! whole random games with every end rule applied after every ply.
//!
//! `cargo bench -p halatafl-rules`; criterion reports the median time per
//! iteration, and the throughput lines give nodes/s and plies/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use halatafl_rules::{perft, perft_make_unmake, Game, MoveList, Position, Variant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn bench_perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for (name, variant) in [
        ("two-foxes", Variant::two_foxes()),
        ("corner-links", Variant::two_foxes().with_corner_links(true)),
        ("classic-13", Variant::classic(13, false).unwrap()),
    ] {
        let start = Position::start(variant);
        let depth = if variant.is_classic() { 7 } else { 6 };
        let nodes = perft(&start, depth);
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("{name}/depth{depth}"), |b| {
            b.iter(|| perft(&start, depth))
        });
    }
    group.finish();
}

/// Plays one random game to its end; returns the plies played.
fn random_game(variant: Variant, rng: &mut ChaCha8Rng, moves: &mut MoveList) -> u64 {
    let mut game = Game::start_of(variant);
    loop {
        moves.clear();
        game.position().generate(moves);
        if game.outcome_given(!moves.is_empty()).is_some() {
            return game.ply() as u64;
        }
        let m = moves[rng.random_range(0..moves.len())];
        game.play_unchecked(m);
    }
}

fn bench_random_games(c: &mut Criterion) {
    let mut group = c.benchmark_group("random-games");
    for (name, variant) in [
        ("two-foxes", Variant::two_foxes()),
        ("classic-13", Variant::classic(13, true).unwrap()),
    ] {
        // Count the plies of the exact games the benchmark replays.
        const GAMES: u64 = 100;
        let mut moves = MoveList::new();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let plies: u64 = (0..GAMES)
            .map(|_| random_game(variant, &mut rng, &mut moves))
            .sum();
        group.throughput(Throughput::Elements(plies));
        group.bench_function(format!("{name}/{GAMES}-games"), |b| {
            b.iter(|| {
                let mut rng = ChaCha8Rng::seed_from_u64(7);
                (0..GAMES)
                    .map(|_| random_game(variant, &mut rng, &mut moves))
                    .sum::<u64>()
            })
        });
    }
    group.finish();
}

/// Copy-make against make/unmake, side by side on the same perft.
fn bench_make_vs_copy(c: &mut Criterion) {
    let mut group = c.benchmark_group("make-vs-copy");
    group.sample_size(10);
    let start = Position::start(Variant::two_foxes());
    let nodes = perft(&start, 6);
    group.throughput(Throughput::Elements(nodes));
    group.bench_function("copy-make/depth6", |b| b.iter(|| perft(&start, 6)));
    group.bench_function("make-unmake/depth6", |b| {
        b.iter(|| {
            let mut p = start;
            perft_make_unmake(&mut p, 6)
        })
    });
    group.finish();
}

criterion_group!(benches, bench_perft, bench_random_games, bench_make_vs_copy);
criterion_main!(benches);
