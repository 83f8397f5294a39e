//! An rpath to libtorch for the extension module (see halatafl-torch-rpath),
//! so `import halatafl` finds libtorch with no variable set.
fn main() {
    halatafl_torch_rpath::emit();
}
