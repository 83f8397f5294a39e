//! The report's figures, drawn with plotters once per backend (PNG and SVG).
//!
//! Text is set in DejaVu Sans, bundled in the binary and registered with
//! plotters' `ab_glyph` text backend, so no system font (fontconfig) is
//! needed: the report draws the same on a bare CI machine.

use crate::data::{eval_scores, Perspective, RunData};
use crate::{write_atomically, ReportError};
use halatafl_arena::stats::{wilson_interval, Z95};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;
use std::path::{Path, PathBuf};

type DrawResult = Result<(), Box<dyn Error>>;

const FONT: &str = "sans-serif";
static DEJAVU_SANS: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Registers the bundled font as plotters' `sans-serif` (once per process).
pub fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            // The font is a fixed, known-good file compiled in.
            let _ = plotters::style::register_font(FONT, style, DEJAVU_SANS);
        }
    });
}

/// The report's figures; each is written as `<name>.png` and `<name>.svg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Score against each opponent per generation, overall and per side.
    Strength,
    /// Losses and learning rate per training step.
    Training,
    /// Game length, end reasons and resign false positives per generation.
    SelfPlay,
    /// Error rates on the run's solved suite per generation (`accuracy.csv`);
    /// drawn only for runs with `[eval] suite`.
    Accuracy,
}

impl Figure {
    /// Every figure every report has, in the order [`crate::write_report`]
    /// draws them ([`Figure::Accuracy`] follows where the run has a suite).
    pub const ALL: [Figure; 3] = [Figure::Strength, Figure::Training, Figure::SelfPlay];

    /// The stem of the figure's `.png` and `.svg` files.
    pub fn name(self) -> &'static str {
        match self {
            Figure::Strength => "strength",
            Figure::Training => "training",
            Figure::SelfPlay => "selfplay",
            Figure::Accuracy => "accuracy",
        }
    }

    fn size(self, run: &RunData) -> (u32, u32) {
        match self {
            Figure::Strength => (960, 340 * opponents(run).len().max(1) as u32),
            Figure::Training => (960, 680),
            Figure::SelfPlay => (960, 1020),
            Figure::Accuracy => (960, 420),
        }
    }

    fn draw<DB: DrawingBackend>(self, run: &RunData, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        match self {
            Figure::Strength => draw_strength(run, root),
            Figure::Training => draw_training(run, root),
            Figure::SelfPlay => draw_selfplay(run, root),
            Figure::Accuracy => draw_accuracy(run, root),
        }
    }
}

/// Draws `figure` into `dir` as PNG and SVG; returns the two paths.
pub(crate) fn draw_figure(
    figure: Figure,
    run: &RunData,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    register_font();
    let size = figure.size(run);
    let png = dir.join(format!("{}.png", figure.name()));
    let svg = dir.join(format!("{}.svg", figure.name()));
    let plot_error = |file: &Path, e: Box<dyn Error>| ReportError::Plot {
        file: file.display().to_string(),
        why: e.to_string(),
    };

    // The bitmap backend writes the file itself, so it draws into the
    // atomic writer's temporary file (whose name keeps the `.png`).
    let mut failure: Option<String> = None;
    halatafl_dataio::write_atomically_with(&png, |temp| {
        let drawn = (|| -> DrawResult {
            let root = BitMapBackend::new(temp, size).into_drawing_area();
            figure.draw(run, &root)?;
            root.present()?;
            Ok(())
        })();
        drawn.map_err(|e| {
            failure = Some(e.to_string());
            std::io::Error::other(e.to_string())
        })
    })
    .map_err(|e| match failure.take() {
        Some(why) => ReportError::Plot {
            file: png.display().to_string(),
            why,
        },
        None => crate::io_error(&png, e),
    })?;

    let mut text = String::new();
    (|| -> DrawResult {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        figure.draw(run, &root)?;
        root.present()?;
        Ok(())
    })()
    .map_err(|e| plot_error(&svg, e))?;
    write_atomically(&svg, text.as_bytes())?;
    Ok(vec![png, svg])
}

fn opponents(run: &RunData) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &run.eval {
        if !out.contains(&r.opponent) {
            out.push(r.opponent.clone());
        }
    }
    out
}

const FOXES: RGBColor = RGBColor(200, 70, 20);
const GEESE: RGBColor = RGBColor(30, 90, 200);
const GREY: RGBColor = RGBColor(150, 150, 150);

fn perspective_style(p: Perspective) -> (RGBColor, f64) {
    match p {
        Perspective::Overall => (BLACK, 0.0),
        Perspective::AsFoxes => (FOXES, -0.12),
        Perspective::AsGeese => (GEESE, 0.12),
    }
}

/// A panel with only a message (a stage the run has not reached yet).
fn empty_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    message: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let area = area.titled(title, (FONT, 22))?;
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        message.to_string(),
        (w as i32 / 2 - 120, h as i32 / 2),
        (FONT, 18).into_font().color(&GREY),
    ))?;
    Ok(())
}

/// Integer tick labels on a float axis; the half-way ticks stay blank.
/// The legend every panel uses: upper right, on a translucent white box.
fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

fn whole(x: &f64) -> String {
    if (x - x.round()).abs() < 1e-6 {
        format!("{}", x.round())
    } else {
        String::new()
    }
}

fn range_with_padding(lo: f64, hi: f64, pad: f64) -> std::ops::Range<f64> {
    if hi > lo {
        lo - pad..hi + pad
    } else {
        lo - 1.0..hi + 1.0
    }
}

fn draw_strength<DB: DrawingBackend>(run: &RunData, root: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let names = opponents(run);
    if names.is_empty() {
        return empty_panel(root, "Strength", "no evaluation games yet");
    }
    let scores = eval_scores(&run.eval);
    let (first, last) = scores.iter().fold((u32::MAX, 0), |(lo, hi), s| {
        (lo.min(s.generation), hi.max(s.generation))
    });
    let panels = root.split_evenly((names.len(), 1));
    for (name, whole_row) in names.iter().zip(panels.iter()) {
        let (area, margin_area) = whole_row.split_horizontally(whole_row.dim_in_pixel().0 * 3 / 5);
        draw_margin(&scores, name, (first, last), &margin_area)?;
        let mut chart = ChartBuilder::on(&area)
            .caption(
                format!("vs {name}: score of the trained network (95% Wilson)"),
                (FONT, 20),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(
                range_with_padding(first as f64, last as f64, 0.5),
                0f64..1f64,
            )?;
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc("score")
            .x_label_formatter(&whole)
            .label_style((FONT, 14))
            .draw()?;
        chart.draw_series(LineSeries::new(
            [(first as f64 - 1.0, 0.5), (last as f64 + 1.0, 0.5)],
            GREY.stroke_width(1),
        ))?;
        for p in Perspective::ALL {
            let (color, offset) = perspective_style(p);
            let points: Vec<_> = scores
                .iter()
                .filter(|s| &s.opponent == name && s.perspective == p && s.record.games() > 0)
                .map(|s| (s.generation as f64 + offset, s.score, s.low, s.high))
                .collect();
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|&(x, y, _, _)| (x, y)),
                    color.stroke_width(2),
                ))?
                .label(p.to_string())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(points.iter().map(|&(x, y, lo, hi)| {
                ErrorBar::new_vertical(x, lo, y, hi, color.stroke_width(1), 8)
            }))?;
            chart.draw_series(
                points
                    .iter()
                    .map(|&(x, y, _, _)| Circle::new((x, y), 4, color.filled())),
            )?;
        }
        draw_legend(&mut chart)?;
    }
    Ok(())
}

/// The network's geese margin per game pair against `name`, per
/// generation, with its 95% interval: what the pair score leaves out (how
/// many geese each side's play was worth), beside it.
fn draw_margin<DB: DrawingBackend>(
    scores: &[crate::data::ScorePoint],
    name: &str,
    (first, last): (u32, u32),
    area: &DrawingArea<DB, Shift>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let points: Vec<(f64, f64, f64, f64)> = scores
        .iter()
        .filter(|s| s.opponent == name && s.perspective == Perspective::Overall && s.margin.n > 0)
        .map(|s| {
            let (lo, hi) = s.margin.interval();
            let m = s.margin.mean();
            // Below two pairs the interval is unbounded: draw the point alone.
            let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (m, m) };
            (s.generation as f64, m, lo, hi)
        })
        .collect();
    if points.is_empty() {
        return empty_panel(area, &format!("vs {name}: geese margin"), "no game pairs");
    }
    let low = points.iter().map(|p| p.2).fold(0f64, f64::min);
    let high = points.iter().map(|p| p.3).fold(0f64, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption("geese margin per pair (95%)", (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(
            range_with_padding(first as f64, last as f64, 0.5),
            range_with_padding(low, high, 0.1 * (high - low).max(1.0)),
        )?;
    chart
        .configure_mesh()
        .x_desc("generation")
        .y_desc("geese")
        .x_label_formatter(&whole)
        .label_style((FONT, 14))
        .draw()?;
    chart.draw_series(LineSeries::new(
        [(first as f64 - 1.0, 0.0), (last as f64 + 1.0, 0.0)],
        GREY.stroke_width(1),
    ))?;
    chart.draw_series(LineSeries::new(
        points.iter().map(|&(x, y, _, _)| (x, y)),
        BLACK.stroke_width(2),
    ))?;
    chart.draw_series(
        points
            .iter()
            .map(|&(x, y, lo, hi)| ErrorBar::new_vertical(x, lo, y, hi, BLACK.stroke_width(1), 8)),
    )?;
    chart.draw_series(
        points
            .iter()
            .map(|&(x, y, _, _)| Circle::new((x, y), 4, BLACK.filled())),
    )?;
    Ok(())
}

fn draw_training<DB: DrawingBackend>(run: &RunData, root: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    if run.train.is_empty() {
        return empty_panel(root, "Training", "no training steps yet");
    }
    let (first, last) = run.train.iter().fold((u64::MAX, 0), |(lo, hi), r| {
        (lo.min(r.step), hi.max(r.step))
    });
    let x_range = range_with_padding(first as f64, last as f64, 0.0);
    let (top, bottom) = root.split_vertically(root.dim_in_pixel().1 * 3 / 5);

    type Loss = fn(&halatafl_dataio::TrainRow) -> f64;
    let losses: [(&str, RGBColor, Loss); 4] = [
        ("total", BLACK, |r| r.total_loss),
        ("policy", FOXES, |r| r.policy_loss),
        ("value", GEESE, |r| r.value_loss),
        ("L2", GREY, |r| r.l2_loss),
    ];
    let high = run
        .train
        .iter()
        .flat_map(|r| losses.iter().map(move |(_, _, f)| f(r)))
        .filter(|v| v.is_finite())
        .fold(0f64, f64::max);
    let mut chart = ChartBuilder::on(&top)
        .caption("Training losses", (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range.clone(), 0f64..(high * 1.1).max(1e-6))?;
    chart
        .configure_mesh()
        .x_desc("step")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("loss")
        .label_style((FONT, 14))
        .draw()?;
    for (name, color, value) in losses {
        chart
            .draw_series(LineSeries::new(
                run.train.iter().map(|r| (r.step as f64, value(r))),
                color.stroke_width(2),
            ))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            run.train
                .iter()
                .map(|r| Circle::new((r.step as f64, value(r)), 3, color.filled())),
        )?;
    }
    draw_legend(&mut chart)?;

    let lr_high = run.train.iter().map(|r| r.lr).fold(0f64, f64::max);
    let mut chart = ChartBuilder::on(&bottom)
        .caption("Learning rate", (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range, 0f64..(lr_high * 1.1).max(1e-9))?;
    chart
        .configure_mesh()
        .x_desc("step")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("lr")
        .y_label_formatter(&|y| format!("{y:.1e}"))
        .label_style((FONT, 14))
        .draw()?;
    chart.draw_series(LineSeries::new(
        run.train.iter().map(|r| (r.step as f64, r.lr)),
        BLACK.stroke_width(2),
    ))?;
    Ok(())
}

fn draw_selfplay<DB: DrawingBackend>(run: &RunData, root: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    if run.selfplay.is_empty() {
        return empty_panel(root, "Self-play", "no self-play games yet");
    }
    let rows = &run.selfplay;
    let (first, last) = rows.iter().fold((u32::MAX, 0), |(lo, hi), r| {
        (lo.min(r.generation), hi.max(r.generation))
    });
    let x_range = range_with_padding(first as f64, last as f64, 0.5);
    let panels = root.split_evenly((3, 1));

    // Game length.
    let longest = rows.iter().map(|r| r.mean_plies).fold(0f64, f64::max);
    let mut chart = ChartBuilder::on(&panels[0])
        .caption("Self-play game length", (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range.clone(), 0f64..(longest * 1.15).max(1.0))?;
    chart
        .configure_mesh()
        .x_desc("generation")
        .y_desc("mean plies")
        .x_label_formatter(&whole)
        .label_style((FONT, 14))
        .draw()?;
    chart.draw_series(LineSeries::new(
        rows.iter().map(|r| (r.generation as f64, r.mean_plies)),
        BLACK.stroke_width(2),
    ))?;
    chart.draw_series(
        rows.iter()
            .map(|r| Circle::new((r.generation as f64, r.mean_plies), 4, BLACK.filled())),
    )?;

    // End reasons, as shares of the generation's games.
    type Count = fn(&halatafl_dataio::SelfPlayRow) -> usize;
    let reasons: [(&str, Count); 8] = [
        ("fewer-than-nine", |r| r.fewer_than_nine),
        ("fewer-than-four", |r| r.fewer_than_four),
        ("pen-filled", |r| r.pen_filled),
        ("no-moves", |r| r.no_moves),
        ("threefold", |r| r.threefold),
        ("fifty-moves", |r| r.fifty_moves),
        ("resigned", |r| r.resigned),
        ("max-plies", |r| r.max_plies),
    ];
    let mut chart = ChartBuilder::on(&panels[1])
        .caption("Self-play end reasons", (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range.clone(), 0f64..1.05f64)?;
    chart
        .configure_mesh()
        .x_desc("generation")
        .y_desc("share of games")
        .x_label_formatter(&whole)
        .label_style((FONT, 14))
        .draw()?;
    for (i, (name, count)) in reasons
        .into_iter()
        .filter(|(_, count)| rows.iter().any(|r| count(r) > 0))
        .enumerate()
    {
        let color = Palette99::pick(i).to_rgba();
        let share = |r: &halatafl_dataio::SelfPlayRow| count(r) as f64 / r.games.max(1) as f64;
        chart
            .draw_series(LineSeries::new(
                rows.iter().map(|r| (r.generation as f64, share(r))),
                color.stroke_width(2),
            ))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            rows.iter()
                .map(|r| Circle::new((r.generation as f64, share(r)), 4, color.filled())),
        )?;
    }
    draw_legend(&mut chart)?;

    // Resign false positives among played-out would-resign games.
    let checked: Vec<_> = rows
        .iter()
        .filter(|r| r.resign_checked > 0)
        .map(|r| {
            let rate = r.resign_false as f64 / r.resign_checked as f64;
            let (lo, hi) = wilson_interval(rate, r.resign_checked as u64, Z95);
            (r.generation as f64, rate, lo, hi)
        })
        .collect();
    let caption = if checked.is_empty() {
        "Resign false positives (no would-resign game played out yet)".to_string()
    } else {
        "Resign false positives (95% Wilson)".to_string()
    };
    let mut chart = ChartBuilder::on(&panels[2])
        .caption(caption, (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range, 0f64..1f64)?;
    chart
        .configure_mesh()
        .x_desc("generation")
        .y_desc("false / checked")
        .x_label_formatter(&whole)
        .label_style((FONT, 14))
        .draw()?;
    chart.draw_series(LineSeries::new(
        checked.iter().map(|&(x, y, _, _)| (x, y)),
        FOXES.stroke_width(2),
    ))?;
    chart.draw_series(
        checked
            .iter()
            .map(|&(x, y, lo, hi)| ErrorBar::new_vertical(x, lo, y, hi, FOXES.stroke_width(1), 8)),
    )?;
    Ok(())
}

/// The error rate on the suite per generation, with its 95% Wilson
/// interval: the raw policy and the search, over every position (solid) and
/// over the hard ones (dashed: one or very few moves keep the value).
fn draw_accuracy<DB: DrawingBackend>(run: &RunData, root: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    if run.accuracy.is_empty() {
        return empty_panel(root, "Accuracy", "no suite in this run");
    }
    let rows = &run.accuracy;
    let (first, last) = rows.iter().fold((u32::MAX, 0), |(lo, hi), r| {
        (lo.min(r.generation), hi.max(r.generation))
    });
    let top = rows.iter().map(|r| r.error_hi).fold(0f64, f64::max);
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Error rate on the solved suite (moves that lose value; 95% Wilson)",
            (FONT, 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            range_with_padding(first as f64, last as f64, 0.5),
            0f64..(top * 1.1).clamp(0.05, 1.0),
        )?;
    chart
        .configure_mesh()
        .x_desc("generation")
        .y_desc("error rate")
        .x_label_formatter(&whole)
        .label_style((FONT, 14))
        .draw()?;
    let series = [
        ("raw", "all", FOXES, -0.06, 2),
        ("search", "all", GEESE, 0.06, 2),
        ("raw", "difficulty hard", FOXES, -0.1, 1),
        ("search", "difficulty hard", GEESE, 0.1, 1),
    ];
    for (agent, group, color, offset, width) in series {
        let points: Vec<(f64, f64, f64, f64)> = rows
            .iter()
            .filter(|r| r.agent == agent && r.group == group && r.positions > 0)
            .map(|r| {
                (
                    r.generation as f64 + offset,
                    r.error_rate,
                    r.error_lo,
                    r.error_hi,
                )
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let style = color.stroke_width(width);
        let label = if group == "all" {
            format!("{agent}, every position")
        } else {
            format!("{agent}, hard positions")
        };
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|&(x, y, _, _)| (x, y)),
                style,
            ))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        chart.draw_series(
            points
                .iter()
                .map(|&(x, y, lo, hi)| ErrorBar::new_vertical(x, lo, y, hi, style, 8)),
        )?;
        chart.draw_series(
            points
                .iter()
                .map(|&(x, y, _, _)| Circle::new((x, y), 3 + width, color.filled())),
        )?;
    }
    draw_legend(&mut chart)?;
    Ok(())
}
