//! Checks of a command's output files, made before any work: an output that
//! cannot be written, or that is one of the command's inputs or another of
//! its outputs, is refused while nothing has been played or solved yet.

use anyhow::{bail, Context, Result};
use halatafl_arena::{same_file, write_target};
use std::path::Path;

/// A file a command reads or writes, named by its flag for messages.
pub type Named<'a> = (&'a str, &'a Path);

/// Refuses `outputs` that are not writable places for a file (a directory,
/// a device, a FIFO), and any output that is the same file as an input or
/// as another output (compared as files, not strings: `./g.csv` and
/// `g.csv`, a link and its target).
pub fn check_outputs(inputs: &[Named], outputs: &[Named]) -> Result<()> {
    for (i, (flag, path)) in outputs.iter().enumerate() {
        write_target(path).with_context(|| format!("{flag} {}", path.display()))?;
        let earlier = inputs
            .iter()
            .map(|named| (named, "an input"))
            .chain(outputs[..i].iter().map(|named| (named, "another output")));
        for ((other_flag, other), role) in earlier {
            if same_file(path, other) {
                bail!(
                    "{flag} {} is the same file as {other_flag} {}: writing it would \
                     overwrite {role}; give another path",
                    path.display(),
                    other.display()
                );
            }
        }
    }
    Ok(())
}
