//! The one atomic writer, and the checks around it.
//!
//! A file is written to a temporary name in its own directory
//! (`.<stem>.tmp-<pid>.<extension>`, so a writer that picks the format from
//! the extension, like the plotting backend, still finds it), synced,
//! renamed over the target and the directory synced: a reader, or a process
//! killed at any moment, sees the old file or the new one, never half of
//! one. When anything fails the temporary file is removed with the error.
//! Policy for what is already at the target: a symbolic link is written
//! through (the link keeps pointing at its target, which is replaced); a
//! directory, FIFO, socket or device is refused, since renaming over it
//! would replace it.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A path a file cannot be written to.
#[derive(Debug, Error)]
pub enum WriteTargetError {
    /// Something other than a regular file is there (directly or at the end
    /// of its links): renaming over it would replace it, so it is refused.
    #[error("{path}: {what}")]
    NotAFile {
        /// The path as given.
        path: String,
        /// What is there instead, and through which link.
        what: String,
    },
    /// The path or one of its links could not be examined.
    #[error("{path}: {source}")]
    Io {
        /// The path, or the link on the way, that failed.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

impl From<WriteTargetError> for std::io::Error {
    fn from(e: WriteTargetError) -> std::io::Error {
        match e {
            WriteTargetError::Io { source, .. } => source,
            other => std::io::Error::new(std::io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

/// Where a write to `path` must land: a symbolic link is followed to its
/// target, and anything there that is not a regular file is refused.
pub fn write_target(path: &Path) -> Result<PathBuf, WriteTargetError> {
    let mut target = path.to_path_buf();
    let io = |p: &Path, source| WriteTargetError::Io {
        path: p.display().to_string(),
        source,
    };
    // A bounded walk, as the kernel bounds link chains (ELOOP).
    for _ in 0..40 {
        let meta = match fs::symlink_metadata(&target) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(target),
            Err(e) => return Err(io(&target, e)),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let link = fs::read_link(&target).map_err(|e| io(&target, e))?;
            target = match target.parent() {
                Some(dir) if link.is_relative() => dir.join(link),
                _ => link,
            };
            continue;
        }
        if kind.is_file() {
            return Ok(target);
        }
        let what = if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(WriteTargetError::NotAFile {
            path: path.display().to_string(),
            what: if target == path {
                what.to_string()
            } else {
                format!("a link to {}, which is {what}", target.display())
            },
        });
    }
    Err(WriteTargetError::NotAFile {
        path: path.display().to_string(),
        what: "a chain of more than 40 symbolic links".into(),
    })
}

/// The temporary name a write to `target` uses, in the same directory.
fn temp_name(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let pid = std::process::id();
    let temp = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!(".{stem}.tmp-{pid}.{ext}"),
        _ => format!(".{name}.tmp-{pid}"),
    };
    target.with_file_name(temp)
}

/// Writes `bytes` to `path` atomically (see the module doc).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // The shared path syncs the file before the rename.
    write_atomically_with(path, |temp| fs::File::create(temp)?.write_all(bytes))
}

/// Writes a file atomically with `write`, which creates and fills the
/// temporary file it is given (a plotting backend, a streaming encoder);
/// the file is synced after it, then renamed over `path`.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let target = write_target(path)?;
    let temp = temp_name(&target);
    let written = write(&temp)
        .and_then(|()| fs::File::open(&temp)?.sync_all())
        .and_then(|()| fs::rename(&temp, &target));
    if let Err(e) = written {
        // A full disk or a refused rename leaves no temporary file behind.
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The process id a temporary file name holds, if `file_name` is one: the
/// writer's `.<stem>.tmp-<pid>.<ext>` and the names of earlier versions
/// (`.<name>.tmp-<pid>`, `.<name>.tmp<pid>`, `.tmp<pid>-<name>`), so files
/// left by any version can be cleaned up.
pub fn temp_file_pid(file_name: &str) -> Option<u32> {
    let rest = file_name.strip_prefix('.')?;
    if let Some(tail) = rest.strip_prefix("tmp") {
        let (digits, _) = tail.split_once('-')?;
        return digits.parse().ok();
    }
    let (_, after) = rest.rsplit_once(".tmp")?;
    let after = after.strip_prefix('-').unwrap_or(after);
    let digits = after.split('.').next()?;
    digits.parse().ok()
}

/// Whether `a` and `b` name the same file, compared as files rather than
/// strings: `x.csv`, `./x.csv`, `dir/../x.csv`, a hard link and a symbolic
/// link to it are all the same file. Paths that do not exist yet are the
/// same when they would be created at the same place (their directories
/// resolved). Used to refuse an output that would overwrite an input or
/// another output of one command.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) {
        return ma.dev() == mb.dev() && ma.ino() == mb.ino();
    }
    // At least one does not exist: where would each be created?
    let resolved = |p: &Path| -> Option<PathBuf> {
        let target = write_target(p).ok()?;
        if let Ok(full) = fs::canonicalize(&target) {
            return Some(full);
        }
        let name = target.file_name()?;
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some(fs::canonicalize(dir).ok()?.join(name))
    };
    match (resolved(a), resolved(b)) {
        (Some(ra), Some(rb)) => ra == rb,
        _ => a == b,
    }
}

/// Reads a whole file that must be a regular file of at most `limit` bytes.
/// Both are checked before anything is read (a device such as `/dev/zero`
/// or a pipe never ends, a huge file would fill memory), and the read itself
/// stops one byte past the limit in case the file grows meanwhile.
pub fn read_bounded_file(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let too_big = |len: u64| {
        refuse(format!(
            "{len} bytes, more than the {limit} this reader accepts"
        ))
    };
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(refuse(
            "not a regular file (a directory, device or pipe)".into(),
        ));
    }
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("halatafl-dataio-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_replace_links_are_followed_and_failures_leave_nothing() {
        let dir = scratch("atomic");
        let file = dir.join("a.csv");
        write_atomically(&file, b"one").unwrap();
        write_atomically(&file, b"two").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"two");
        // Through a link: the link stays, its target is replaced.
        let link = dir.join("link.csv");
        std::os::unix::fs::symlink("a.csv", &link).unwrap();
        write_atomically(&link, b"three").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&file).unwrap(), b"three");
        // A directory is refused before anything is written.
        fs::create_dir_all(dir.join("d.csv")).unwrap();
        let err = write_atomically(&dir.join("d.csv"), b"x").unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        // A writer that fails leaves no temporary file behind.
        let err = write_atomically_with(&dir.join("b.png"), |temp| {
            assert!(
                temp.to_string_lossy().ends_with(".png"),
                "{}",
                temp.display()
            );
            fs::write(temp, b"half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(names(&dir), ["a.csv", "d.csv", "link.csv"]);
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn temporary_names_give_back_their_process() {
        let temp = temp_name(Path::new("run/checkpoints/gen_0007.safetensors"));
        let name = temp.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(temp_file_pid(&name), Some(std::process::id()));
        assert_eq!(temp_file_pid(".gen_0007.safetensors.tmp-4242"), Some(4242));
        assert_eq!(temp_file_pid(".train.csv.tmp77"), Some(77));
        assert_eq!(temp_file_pid(".tmp12-strength.png"), Some(12));
        assert_eq!(temp_file_pid(".strength.tmp-12.png"), Some(12));
        for other in [
            "gen_0007.safetensors",
            ".hidden",
            ".x.tmp-",
            ".tmpfile",
            "a.tmp-3",
        ] {
            assert_eq!(temp_file_pid(other), None, "{other}");
        }
    }

    #[test]
    fn the_same_file_under_other_names() {
        let dir = scratch("same");
        let a = dir.join("a.csv");
        fs::write(&a, b"x").unwrap();
        assert!(same_file(&a, &dir.join(".").join("a.csv")));
        fs::hard_link(&a, dir.join("h.csv")).unwrap();
        assert!(same_file(&a, &dir.join("h.csv")));
        assert!(!same_file(&a, &dir.join("b.csv")));
        // Neither exists yet.
        assert!(same_file(&dir.join("n.csv"), &dir.join(".").join("n.csv")));
        fs::remove_dir_all(&dir).ok();
    }
}
