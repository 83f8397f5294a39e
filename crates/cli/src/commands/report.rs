use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Write a run's key plots (PNG and SVG: strength per opponent and side with
/// 95% Wilson intervals, losses and learning rate, self-play statistics) and
/// a Markdown summary, report.md, into <RUN>/report/.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The run directory (made by `halatafl train`).
    pub run: PathBuf,
    /// Folder for the files (default: <RUN>/report).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> Result<()> {
    let written = halatafl_report::write_report(&args.run, args.out.as_deref())?;
    for file in &written.files {
        println!("{}", file.display());
    }
    Ok(())
}
