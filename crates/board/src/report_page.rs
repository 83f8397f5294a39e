//! A run's report on its own page: the plots and tables of `halatafl report`
//! (crates/report), drawn afresh into the server's own folder each time the
//! page is opened, so a run still training shows its latest generation and
//! the run directory is not written to.

use pulldown_cmark::{html, Options, Parser};
use std::path::{Path, PathBuf};

/// A report drawn for the page.
#[derive(Clone, Debug)]
pub struct DrawnReport {
    /// The report's Markdown, as HTML.
    pub html: String,
    /// The files the page may fetch (plots), by name.
    pub files: Vec<String>,
    /// Where they are.
    pub dir: PathBuf,
}

/// Draws the report of the run in `run` into `out`.
pub fn draw(run: &Path, out: &Path) -> Result<DrawnReport, String> {
    let written = halatafl_report::write_report(run, Some(out)).map_err(|e| e.to_string())?;
    let md_path = written.dir.join("report.md");
    let md =
        std::fs::read_to_string(&md_path).map_err(|e| format!("{}: {e}", md_path.display()))?;
    let mut body = String::new();
    html::push_html(&mut body, Parser::new_ext(&md, Options::ENABLE_TABLES));
    let files = written
        .files
        .iter()
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
        .collect();
    Ok(DrawnReport {
        html: body,
        files,
        dir: written.dir,
    })
}

/// The page around a drawn report (or the reason there is none).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title}</title><link rel=\"stylesheet\" href=\"/assets/board.css\"></head>\
         <body class=\"report\"><p><a href=\"/\">&larr; the board</a></p>{body}</body></html>",
        title = escape(title)
    )
}

/// Text made safe to put in HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
