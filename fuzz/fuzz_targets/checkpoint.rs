//! Checkpoint loading from any bytes: the safetensors header, the metadata
//! (format and encoding versions, the network config and its ranges, the
//! checksum) and the tensors are checked before anything is allocated for
//! them, so no input panics, aborts or allocates without bound.
#![no_main]
use halatafl_nn::checkpoint::load_bytes;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = load_bytes(Path::new("fuzz.safetensors"), data, None, tch::Device::Cpu);
});
