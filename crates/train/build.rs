//! An rpath to libtorch for this package's binaries and tests (see
//! halatafl-torch-rpath), and the git revision the code is built from.
//!
//! `run.json` records which code made a run. Asking git at run time would
//! name whatever checkout the command runs in, which need not be the one
//! the binary was built from, and would not say whether the build had
//! uncommitted changes; so the revision is fixed here, at build time, with
//! `-dirty` when tracked files differ from it.
use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    halatafl_torch_rpath::emit();
    let revision = match git(&["rev-parse", "HEAD"]) {
        Some(head) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{head}-dirty")
            } else {
                head
            }
        }
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=HALATAFL_BUILD_REVISION={revision}");
    // Rerun when the commit moves (HEAD, the branch's ref, the index) or
    // any source of the workspace changes (dirty or clean again).
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let git_dir = Path::new(&git_dir);
        for file in ["HEAD", "index"] {
            println!("cargo:rerun-if-changed={}", git_dir.join(file).display());
        }
        // A worktree keeps its HEAD and index apart, its branches in the
        // common directory.
        let common = git(&["rev-parse", "--git-common-dir"]).map_or(git_dir.to_path_buf(), |c| {
            let c = Path::new(&c);
            if c.is_absolute() {
                c.to_path_buf()
            } else {
                std::env::current_dir()
                    .expect("a working directory")
                    .join(c)
            }
        });
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!(
                "cargo:rerun-if-changed={}",
                common.join(reference).display()
            );
        }
    }
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let workspace = Path::new(&manifest).join("../..");
    for tracked in ["crates", "Cargo.toml", "Cargo.lock", "configs"] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(tracked).display()
        );
    }
}
