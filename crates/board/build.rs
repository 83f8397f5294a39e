//! An rpath to libtorch for this package's binaries and tests (see halatafl-torch-rpath).
fn main() {
    halatafl_torch_rpath::emit();
}
