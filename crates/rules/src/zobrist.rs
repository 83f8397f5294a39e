//! Zobrist keys, generated at compile time with splitmix64 so they are the same
//! on every machine and build (hashes can be stored in files and compared).

const fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const fn keys(seed: u64) -> [u64; 49] {
    let mut out = [0u64; 49];
    let mut i = 0;
    while i < 49 {
        out[i] = splitmix(seed.wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        i += 1;
    }
    out
}

pub const FOX: [u64; 49] = keys(0x0f0f_1a7a_f100_0001);
pub const GOOSE: [u64; 49] = keys(0x6005_e000_0000_0002);
/// XORed in when the geese are to move.
pub const GEESE_TO_MOVE: u64 = splitmix(0x51de_0000_0000_0003);
