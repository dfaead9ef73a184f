//! SVG plots (plotters' SVG backend): pictures a person would rather look
//! at than read.
//!
//! - `timeline`: the victims' latency over time, one panel per server, the
//!   blockers' windows shaded and named (E1, E2).
//! - `bars`: grouped bars, optionally on a log scale, each bar labelled with
//!   its value (DEL/UNLINK, MONITOR throughput, round trips).
//! - `lines`: one line per series (HSCAN COUNT vs total time).
//!
//! Text is left to the SVG viewer (no font files are read), so the files are
//! small and render anywhere.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One bar colour per series, the same in every plot.
const SERIES: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Shading of a blocker's window.
const WINDOW_FILL: RGBColor = RGBColor(255, 190, 60);

pub fn series_color(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

/// One server's panel of a timeline.
pub struct TimelinePanel {
    pub label: String,
    /// (bucket start s, median ms, max ms), from `stats::timeline_buckets`.
    pub buckets: Vec<(f64, f64, f64)>,
    /// (name, start s, end s) of each condition.
    pub windows: Vec<(String, f64, f64)>,
    pub t_end_s: f64,
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plot: {e:?}")
}

/// The victims' latency timeline.
pub fn timeline(path: &Path, title: &str, panels: &[TimelinePanel]) -> Result<(), String> {
    let h = 120 + 330 * panels.len() as u32;
    let root = SVGBackend::new(path, (1100, h)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(err)?;
    let areas = root.split_evenly((panels.len().max(1), 1));
    let ymax_all = panels
        .iter()
        .flat_map(|p| p.buckets.iter().map(|b| b.2))
        .fold(1.0f64, f64::max);
    let (ymin, ymax) = (0.01f64, ymax_all * 3.0);
    for (p, area) in panels.iter().zip(areas.iter()) {
        // A little room on the right for the last condition's name.
        let t_end = p.t_end_s.max(0.1) * 1.04;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{}   (red: worst GET per time bucket, blue: median)",
                    p.label
                ),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..t_end, (ymin..ymax).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time since the start of the experiment (s)")
            .y_desc("victim GET latency (ms, log)")
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(p.windows.iter().map(|(_, a, b)| {
                // A window narrower than a pixel is still drawn a pixel wide.
                let b = b.max(a + t_end / 800.0);
                Rectangle::new([(*a, ymin), (b, ymax)], WINDOW_FILL.mix(0.35).filled())
            }))
            .map_err(err)?;
        // Condition names, staggered in height so neighbours do not collide.
        for (i, (name, a, _)) in p.windows.iter().enumerate() {
            let y = ymax / 10f64.powf(0.35 * (i % 4) as f64 + 0.15);
            chart
                .draw_series(std::iter::once(Text::new(
                    name.clone(),
                    (*a, y),
                    ("sans-serif", 12).into_font().color(&BLACK),
                )))
                .map_err(err)?;
        }
        // One line piece per stretch of samples: where the victims were
        // paused (the other server was measured) the line breaks.
        let gap = t_end / 150.0;
        for piece in split_at_gaps(&p.buckets, gap) {
            chart
                .draw_series(LineSeries::new(
                    piece.iter().map(|b| (b.0, b.2.max(ymin))),
                    series_color(3).stroke_width(1),
                ))
                .map_err(err)?;
            chart
                .draw_series(LineSeries::new(
                    piece.iter().map(|b| (b.0, b.1.max(ymin))),
                    series_color(0).stroke_width(1),
                ))
                .map_err(err)?;
        }
    }
    root.present().map_err(err)?;
    Ok(())
}

/// Runs of buckets no further apart than `gap` seconds.
fn split_at_gaps(buckets: &[(f64, f64, f64)], gap: f64) -> Vec<&[(f64, f64, f64)]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=buckets.len() {
        if i == buckets.len() || buckets[i].0 - buckets[i - 1].0 > gap {
            if i > start {
                out.push(&buckets[start..i]);
            }
            start = i;
        }
    }
    out
}

/// One group of bars: its name and (series name, value) per bar.
pub struct BarGroup {
    pub name: String,
    pub bars: Vec<(String, f64)>,
}

/// Grouped bars; `log` for values that span orders of magnitude.
pub fn bars(
    path: &Path,
    title: &str,
    y_desc: &str,
    log: bool,
    groups: &[BarGroup],
) -> Result<(), String> {
    let root = SVGBackend::new(path, (1100, 620)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    draw_bars(&root, title, y_desc, log, groups)?;
    root.present().map_err(err)?;
    Ok(())
}

fn draw_bars(
    root: &DrawingArea<SVGBackend, Shift>,
    title: &str,
    y_desc: &str,
    log: bool,
    groups: &[BarGroup],
) -> Result<(), String> {
    // The series, in order of first appearance: one colour each.
    let mut series: Vec<String> = Vec::new();
    for g in groups {
        for (s, _) in &g.bars {
            if !series.contains(s) {
                series.push(s.clone());
            }
        }
    }
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.1))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let vmax = values.iter().cloned().fold(1e-9, f64::max);
    let vmin = values.iter().cloned().fold(vmax, f64::min);
    let n = groups.len().max(1) as f64;
    let x_range = 0f64..n;
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(60)
        .y_label_area_size(80);
    let per = series.len().max(1) as f64;
    let bar_x = |g: usize, s: usize| {
        let w = 0.8 / per;
        let x0 = g as f64 + 0.1 + w * s as f64;
        (x0, x0 + w * 0.92)
    };
    // Labels under the groups, placed in pixels under each group's centre.
    let mut label_px: Vec<(String, (i32, i32))> = Vec::new();
    if log {
        let (lo, hi) = (vmin / 3.0, vmax * 12.0);
        let mut chart = builder
            .build_cartesian_2d(x_range, (lo..hi).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        for (gi, g) in groups.iter().enumerate() {
            for (name, v) in &g.bars {
                let si = series.iter().position(|s| s == name).unwrap_or(0);
                let (a, b) = bar_x(gi, si);
                if !v.is_finite() {
                    not_measured(&mut chart, (a + b) / 2.0, lo * 1.3)?;
                    continue;
                }
                let v = v.max(lo);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(a, lo), (b, v)],
                        series_color(si).filled(),
                    )))
                    .map_err(err)?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        value_label(v),
                        ((a + b) / 2.0, v * 1.15),
                        ("sans-serif", 11)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )))
                    .map_err(err)?;
            }
            label_px.push((g.name.clone(), chart.backend_coord(&(gi as f64 + 0.5, lo))));
        }
        legend(&mut chart, &series, (0.0, lo))?;
    } else {
        let hi = vmax * 1.2;
        let mut chart = builder.build_cartesian_2d(x_range, 0f64..hi).map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        for (gi, g) in groups.iter().enumerate() {
            for (name, v) in &g.bars {
                let si = series.iter().position(|s| s == name).unwrap_or(0);
                let (a, b) = bar_x(gi, si);
                if !v.is_finite() {
                    not_measured(&mut chart, (a + b) / 2.0, hi * 0.02)?;
                    continue;
                }
                let v = v.max(0.0);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(a, 0.0), (b, v)],
                        series_color(si).filled(),
                    )))
                    .map_err(err)?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        value_label(v),
                        ((a + b) / 2.0, v + hi * 0.01),
                        ("sans-serif", 11)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )))
                    .map_err(err)?;
            }
            label_px.push((g.name.clone(), chart.backend_coord(&(gi as f64 + 0.5, 0.0))));
        }
        legend(&mut chart, &series, (0.0, 0.0))?;
    }
    for (name, (px, py)) in label_px {
        root.draw(&Text::new(
            name,
            (px, py + 8),
            ("sans-serif", 13)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// A legend with one entry per series (drawn as invisible series so that
/// plotters lays out the box).
fn legend<'a, Y: plotters::coord::ranged1d::Ranged<ValueType = f64>>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'a>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, Y>,
    >,
    series: &[String],
    at: (f64, f64),
) -> Result<(), String> {
    for (i, s) in series.iter().enumerate() {
        let c = series_color(i);
        chart
            .draw_series(std::iter::once(Circle::new(at, 0, c.filled())))
            .map_err(err)?
            .label(s.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// "n/a" where a bar is missing (the server lacks the command).
fn not_measured<'a, Y: plotters::coord::ranged1d::Ranged<ValueType = f64>>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'a>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, Y>,
    >,
    x: f64,
    y: f64,
) -> Result<(), String> {
    chart
        .draw_series(std::iter::once(Text::new(
            "n/a",
            (x, y),
            ("sans-serif", 12)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Bottom)),
        )))
        .map_err(err)?;
    Ok(())
}

fn value_label(v: f64) -> String {
    if v >= 100_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// One line of a line plot.
pub struct LineSeriesData {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Lines on log-log axes (both quantities span orders of magnitude).
pub fn lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[LineSeriesData],
) -> Result<(), String> {
    let root = SVGBackend::new(path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().cloned())
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .collect();
    let xmin = pts.iter().map(|p| p.0).fold(f64::MAX, f64::min).min(1e9);
    let xmax = pts.iter().map(|p| p.0).fold(1e-9, f64::max);
    let ymin = pts.iter().map(|p| p.1).fold(f64::MAX, f64::min).min(1e9);
    let ymax = pts.iter().map(|p| p.1).fold(1e-9, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (xmin / 1.5..xmax * 1.5).log_scale(),
            (ymin / 2.0..ymax * 2.0).log_scale(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let c = series_color(i);
        chart
            .draw_series(LineSeries::new(s.points.iter().cloned(), c.stroke_width(2)))
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart
            .draw_series(s.points.iter().map(|p| Circle::new(*p, 4, c.filled())))
            .map_err(err)?;
        chart
            .draw_series(s.points.iter().map(|p| {
                Text::new(
                    value_label(p.1),
                    (p.0, p.1 * 1.25),
                    ("sans-serif", 11).into_font().color(&BLACK),
                )
            }))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// What a slice of the stall timeline is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceKind {
    /// The stall itself (or, on the lazy-free panel, the job).
    Focus,
    /// Another command on the main thread.
    Other,
    /// `poll`: the loop asleep, nothing to do.
    Idle,
    /// A lazy-free job.
    Bio,
    /// A whole loop pass (drawn as a thin line under the main track: time
    /// inside a pass with no slice is the loop busy elsewhere, or off the CPU).
    Pass,
}

/// One slice on a track, in ms relative to the stall's start.
#[derive(Clone, Debug)]
pub struct Slice {
    pub name: String,
    pub start_ms: f64,
    pub end_ms: f64,
    pub kind: SliceKind,
}

/// A client whose command waited behind the stall.
#[derive(Clone, Debug)]
pub struct Victim {
    pub client_id: u64,
    pub command: String,
    /// When its bytes were waiting from (clipped to the panel).
    pub queued_ms: f64,
    pub start_ms: f64,
    pub end_ms: f64,
    pub wait_ms: f64,
}

/// One stall of the stall timeline (trace.rs builds them).
#[derive(Clone, Debug)]
pub struct StallPanel {
    pub title: String,
    pub from_ms: f64,
    pub to_ms: f64,
    pub main_track: String,
    pub bio_track: String,
    pub main: Vec<Slice>,
    pub bio: Vec<Slice>,
    pub victims: Vec<Victim>,
}

/// The stall timeline: per panel, the main thread's track with the
/// stalling command in red, the `bio_lazy_free` track, and one row per
/// victim whose queue wait (orange) sits under the stall: "GETs queued
/// behind KEYS" without a trace viewer.
pub fn stall_timeline(path: &Path, title: &str, panels: &[StallPanel]) -> Result<(), String> {
    const ROW_PX: u32 = 34;
    const PANEL_EXTRA_PX: u32 = 110;
    let heights: Vec<u32> = panels
        .iter()
        .map(|p| PANEL_EXTRA_PX + ROW_PX * (2 + p.victims.len() as u32))
        .collect();
    let total = 50 + heights.iter().sum::<u32>();
    let base = SVGBackend::new(path, (1200, total)).into_drawing_area();
    base.fill(&WHITE).map_err(err)?;
    let titled = base.titled(title, ("sans-serif", 20)).map_err(err)?;
    let titled = titled
        .titled(
            "red: the stall | orange: a client's command queued, from its bytes' arrival to its run | \
             blue: other commands | gray: poll (the loop asleep) | green: a lazy-free job | \
             dark line: loop passes",
            ("sans-serif", 12),
        )
        .map_err(err)?;
    let mut rest = titled;
    for (p, h) in panels.iter().zip(heights) {
        let (area, below) = rest.split_vertically(h);
        rest = below;
        draw_stall_panel(&base, &area, p)?;
    }
    base.present().map_err(err)?;
    Ok(())
}

fn draw_stall_panel(
    base: &DrawingArea<SVGBackend, Shift>,
    area: &DrawingArea<SVGBackend, Shift>,
    p: &StallPanel,
) -> Result<(), String> {
    let rows = 2 + p.victims.len();
    let span = (p.to_ms - p.from_ms).max(0.001);
    let min_w = span / 600.0;
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(250)
        .build_cartesian_2d(p.from_ms..p.to_ms, 0f64..rows as f64)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .y_label_formatter(&|_| String::new())
        .x_desc("ms from the start of the stall")
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    // Row r (0 = top) spans this band of y.
    let band = |r: usize| {
        let y = (rows - 1 - r) as f64;
        (y + 0.18, y + 0.82)
    };
    // The stall's time, shaded across every row: what waited sits under it.
    if let Some(f) = p
        .main
        .iter()
        .chain(p.bio.iter())
        .find(|s| s.kind == SliceKind::Focus)
    {
        let end = f.end_ms.max(f.start_ms + min_w);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(f.start_ms, 0.0), (end, rows as f64)],
                RGBColor(214, 39, 40).mix(0.07).filled(),
            )))
            .map_err(err)?;
    }
    let mut labelled = 0;
    let mut draw_slices = |chart: &mut ChartContext<
        '_,
        SVGBackend<'_>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
                           slices: &[Slice],
                           row: usize|
     -> Result<(), String> {
        let (y0, y1) = band(row);
        for s in slices {
            let a = s.start_ms.max(p.from_ms);
            let b = s.end_ms.min(p.to_ms).max(a + min_w);
            let (fill, label) = match s.kind {
                // A lazy-free job stays green, even as the panel's focus.
                SliceKind::Focus if row == 1 => (series_color(2).filled(), true),
                SliceKind::Focus => (RGBColor(214, 39, 40).filled(), true),
                SliceKind::Other => (series_color(0).filled(), b - a > span / 8.0),
                SliceKind::Idle => (RGBColor(215, 215, 215).filled(), false),
                SliceKind::Bio => (series_color(2).filled(), true),
                SliceKind::Pass => (RGBColor(90, 90, 90).filled(), false),
            };
            let (ya, yb) = match s.kind {
                SliceKind::Idle => (y0 + 0.22, y1 - 0.22),
                SliceKind::Pass => (y0 - 0.1, y0 - 0.04),
                _ => (y0, y1),
            };
            chart
                .draw_series(std::iter::once(Rectangle::new([(a, ya), (b, yb)], fill)))
                .map_err(err)?;
            if label && labelled < 12 {
                labelled += 1;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{} ({:.2} ms)", s.name, s.end_ms - s.start_ms),
                        (a, y1 + 0.02),
                        ("sans-serif", 11)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Left, VPos::Bottom)),
                    )))
                    .map_err(err)?;
            }
        }
        Ok(())
    };
    draw_slices(&mut chart, &p.main, 0)?;
    draw_slices(&mut chart, &p.bio, 1)?;
    for (i, v) in p.victims.iter().enumerate() {
        let (y0, y1) = band(2 + i);
        let qa = v.queued_ms.max(p.from_ms);
        let qb = v.start_ms.min(p.to_ms).max(qa + min_w);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(qa, y0 + 0.1), (qb, y1 - 0.1)],
                series_color(1).mix(0.75).filled(),
            )))
            .map_err(err)?;
        let ra = v.start_ms.min(p.to_ms);
        let rb = v.end_ms.min(p.to_ms).max(ra + min_w);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(ra, y0), (rb, y1)],
                series_color(0).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{}: queued {:.2} ms", v.command, v.wait_ms),
                (qa, y1 + 0.02),
                ("sans-serif", 11)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Bottom)),
            )))
            .map_err(err)?;
    }
    // Row names, right-aligned in the label area (absolute pixels).
    let mut names = vec![p.main_track.clone(), p.bio_track.clone()];
    names.extend(
        p.victims
            .iter()
            .map(|v| format!("client {} waited", v.client_id)),
    );
    for (r, name) in names.into_iter().enumerate() {
        let (y0, y1) = band(r);
        let (px, py) = chart.backend_coord(&(p.from_ms, (y0 + y1) / 2.0));
        base.draw(&Text::new(
            name,
            (px - 8, py),
            ("sans-serif", 12)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(err)?;
    }
    Ok(())
}
