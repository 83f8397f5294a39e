//! Writes an rpath to libtorch's real lib folder into this crate's tests and
//! benchmarks, so they run without LD_LIBRARY_PATH. (Binaries that link this
//! crate do the same in their own build scripts.)
fn main() {
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        let lib = std::fs::canonicalize(&lib)
            .map(|p| p.display().to_string())
            .unwrap_or(lib);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
}
