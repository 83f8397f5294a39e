//! The extension loads the libtorch of the `torch` package installed beside
//! it (`$ORIGIN/../torch/lib`), never the builder's: see
//! `halatafl_torch_rpath::emit_beside_torch_package` and docs/python.md,
//! "PyTorch".
fn main() {
    halatafl_torch_rpath::emit_beside_torch_package();
}
