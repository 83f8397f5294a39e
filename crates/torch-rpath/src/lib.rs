//! For build scripts of packages that link libtorch (through `tch`): writes an
//! rpath to libtorch's real lib folder into the package's binaries, tests and
//! benchmarks, so they run with no LD_LIBRARY_PATH or other variable set.
//!
//! The folder comes from `DEP_TCH_LIBTORCH_LIB`, which `torch-sys` exports
//! only to build scripts of packages that depend on it directly; so a package
//! using this keeps `torch-sys` among its own dependencies. The path is
//! canonicalized because the build finds libtorch through the checkout's
//! `.libtorch` link, which binaries should not depend on. It also keeps
//! `libtorch_cuda` linked where libtorch has it, so CUDA works when present.

#![warn(missing_docs)]

/// Call from `build.rs`: an rpath to the libtorch this build links.
pub fn emit() {
    if let Some(lib) = libtorch_lib() {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
        keep_cuda(&lib);
    }
}

/// Call from the Python extension's `build.rs`: an rpath to the `torch`
/// package installed beside the extension's own package
/// (`site-packages/torch/lib`, relative to `site-packages/halatafl/`), and
/// none to the builder's libtorch, so a wheel installs anywhere and loads
/// the one libtorch of the environment it lives in, as torchvision's
/// extensions do.
pub fn emit_beside_torch_package() {
    if let Some(lib) = libtorch_lib() {
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/../torch/lib");
        keep_cuda(&lib);
    }
}

/// libtorch's real lib folder, as `torch-sys` found it.
fn libtorch_lib() -> Option<String> {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    let lib = std::env::var("DEP_TCH_LIBTORCH_LIB").ok()?;
    Some(
        std::fs::canonicalize(&lib)
            .map(|p| p.display().to_string())
            .unwrap_or(lib),
    )
}

/// No symbol of libtorch_cuda is used directly: it registers the CUDA
/// backend when loaded. The linker's --as-needed would drop it and leave
/// `cuda` unavailable, so keep it explicitly when it exists.
fn keep_cuda(lib: &str) {
    if std::path::Path::new(lib).join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }
}
