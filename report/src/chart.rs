//! Drawing with plotters on an SVG string: grouped bars (one group per workload, one bar per
//! series), horizontal stacked bars, and a legend strip drawn above the plot so it never
//! covers a bar.

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The drawing area every figure is drawn on.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A category axis: `n` slots of width 1, key points (ticks, labels) at the slots' centres.
#[derive(Debug, Clone, Copy)]
pub struct Slots(pub usize);

impl Ranged for Slots {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let n = self.0.max(1) as f64;
        limit.0 + ((limit.1 - limit.0) as f64 * v / n).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            (0..self.0).map(|i| i as f64 + 0.5).collect()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.0.max(1) as f64
    }
}

impl ValueFormatter<f64> for Slots {
    fn format(v: &f64) -> String {
        format!("{v}")
    }
}

/// A drawing failure: plotters' error on the SVG backend, kept as the source (the caller
/// adds the file name).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct DrawError(#[from] DrawingAreaErrorKind<std::io::Error>);

pub type DrawResult = Result<(), DrawError>;

/// plotters' error as a [`DrawError`], for `map_err`.
pub fn err(e: DrawingAreaErrorKind<std::io::Error>) -> DrawError {
    DrawError(e)
}

pub const FONT: &str = "sans-serif";

/// Categorical colours (Tableau 10): distinct, readable on white, none white or black.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xBA, 0xB0, 0xAC),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// plotters' own estimate of a text's width in pixels (what its layout uses, too).
pub fn text_width(text: &str, size: f64) -> i32 {
    let em = size / 1.24 / 1.24;
    (em * 0.7 * text.chars().count() as f64).round() as i32
}

/// Render `draw` onto a `w`×`h` SVG and return the document.
pub fn svg(w: u32, h: u32, draw: impl FnOnce(&Area) -> DrawResult) -> Result<String, DrawError> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        draw(&root)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

/// A title line and, under it, one swatch and name per entry, centred; returns the area
/// below the strip.
pub fn title_and_legend<'a>(
    area: &Area<'a>,
    title: &str,
    entries: &[(String, RGBColor)],
) -> Result<Area<'a>, DrawError> {
    let (w, _) = area.dim_in_pixel();
    let height = if entries.is_empty() { 30 } else { 54 };
    let (top, rest) = area.split_vertically(height);
    let center = Pos::new(HPos::Center, VPos::Top);
    top.draw(&Text::new(
        title.to_string(),
        (w as i32 / 2, 6),
        TextStyle::from((FONT, 18).into_font().style(FontStyle::Bold)).pos(center),
    ))
    .map_err(err)?;
    let item = |name: &str| 14 + 6 + text_width(name, 14.0) + 22;
    let total: i32 = entries.iter().map(|(n, _)| item(n)).sum();
    let mut x = (w as i32 - total).max(0) / 2;
    for (name, c) in entries {
        top.draw(&Rectangle::new([(x, 32), (x + 14, 46)], c.filled()))
            .map_err(err)?;
        top.draw(&Text::new(
            name.clone(),
            (x + 20, 39),
            TextStyle::from((FONT, 14)).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(err)?;
        x += item(name);
    }
    Ok(rest)
}

/// The value axis: linear (plotters' own ticks), or log10 with ticks at 1-2-5 steps. In
/// log mode, positions are log10 of the values.
#[derive(Debug, Clone, Copy)]
pub struct YAxis {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
}

impl Ranged for YAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let r = (v - self.lo) / (self.hi - self.lo).max(1e-12);
        limit.0 + ((limit.1 - limit.0) as f64 * r).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if !self.log {
            return RangedCoordf64::from(self.lo..self.hi).key_points(hint);
        }
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        let decades = (self.lo.floor() as i32)..=(self.hi.ceil() as i32);
        let steps: &[f64] = if self.hi - self.lo > 4.0 {
            &[1.0]
        } else {
            &[1.0, 2.0, 5.0]
        };
        decades
            .flat_map(|d| steps.iter().map(move |m| (m * 10f64.powi(d)).log10()))
            .filter(|v| (self.lo..=self.hi).contains(v))
            .collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for YAxis {
    fn format(v: &f64) -> String {
        format!("{v}")
    }
}

/// Whether bars of these values read better on a log axis: they span more than 20×.
pub fn wide_spread<'a>(values: impl IntoIterator<Item = &'a Vec<Option<f64>>>) -> bool {
    let (lo, hi) = values
        .into_iter()
        .flatten()
        .flatten()
        .filter(|v| v.is_finite() && **v > 0.0)
        .fold((f64::MAX, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    hi > 0.0 && hi / lo > 20.0
}

/// Grouped vertical bars.
pub struct Bars<'a> {
    pub title: &'a str,
    pub y_desc: &'a str,
    /// One label per group (x axis).
    pub groups: &'a [String],
    /// Series names and colours (the legend, if drawn, is the caller's).
    pub series: &'a [(String, RGBColor)],
    /// `values[group][series]`; `None` draws no bar.
    pub values: &'a [Vec<Option<f64>>],
    /// A dashed horizontal line (the baseline at 1.0).
    pub reference: Option<f64>,
    /// Fixed top of the y axis (default: from the data).
    pub y_max: Option<f64>,
    /// A log axis, bars growing from its bottom (values ≤ 0 draw no bar).
    pub log: bool,
    /// Write each bar's value at its end in these groups (e.g. the geometric mean).
    pub value_labels: &'a [usize],
    /// Format of those labels.
    pub fmt: fn(f64) -> String,
}

/// The chart [`bars`] draws on: category slots across, the value axis up.
type BarChart<'a, 'b> = ChartContext<'b, SVGBackend<'a>, Cartesian2d<Slots, YAxis>>;

pub fn bars(area: &Area, b: &Bars) -> DrawResult {
    let (n, m) = (b.groups.len().max(1), b.series.len().max(1));
    let axis = y_axis(b);
    let mut chart = bar_chart(area, b, axis)?;
    let pos = |v: f64| axis_pos(v, b.log);
    let (px, _) = chart.plotting_area().dim_in_pixel();
    let bar_px = px as f64 / n as f64 * 0.78 / m as f64;
    let slot = 0.78 / m as f64;
    let x0 = |g: usize, s: usize| g as f64 + 0.11 + s as f64 * slot;
    let at = |g: usize, s: usize| b.values.get(g)?.get(s).copied().flatten().and_then(pos);
    for (s, (_, c)) in b.series.iter().enumerate() {
        let rects = (0..b.values.len()).filter_map(|g| {
            let y = at(g, s)?;
            let corners = [(x0(g, s), axis.lo), (x0(g, s) + slot * 0.9, y)];
            Some(Rectangle::new(corners, c.filled()))
        });
        chart.draw_series(rects).map_err(err)?;
    }
    if let Some(r) = b.reference.and_then(pos) {
        let dash = DashedLineSeries::new(
            [(0.0, r), (n as f64, r)],
            6,
            4,
            ShapeStyle::from(&BLACK).stroke_width(1),
        );
        chart.draw_series(dash).map_err(err)?;
    }
    for &g in b.value_labels {
        for s in 0..b.series.len() {
            let (Some(y), Some(v)) = (at(g, s), b.values[g][s]) else {
                continue;
            };
            let (boxed, text) = value_label((b.fmt)(v), bar_px);
            chart
                .plotting_area()
                .draw(&(EmptyElement::at((x0(g, s) + slot * 0.45, y)) + boxed + text))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Axis position of a value: itself, or its log10 on a log axis (None: not drawable).
fn axis_pos(v: f64, log: bool) -> Option<f64> {
    match (v.is_finite(), log) {
        (true, false) => Some(v),
        (true, true) if v > 0.0 => Some(v.log10()),
        _ => None,
    }
}

/// The value axis of `b`: every drawable value, the reference and (linear) zero, padded
/// above for the value labels.
fn y_axis(b: &Bars) -> YAxis {
    let log = b.log;
    let pos = |v: f64| axis_pos(v, log);
    let mut ys: Vec<f64> = b
        .values
        .iter()
        .flatten()
        .flatten()
        .filter_map(|&v| pos(v))
        .collect();
    ys.extend(b.reference.and_then(pos));
    if !log {
        ys.push(0.0);
    }
    let lo = ys.iter().copied().fold(f64::MAX, f64::min);
    let hi = ys.iter().copied().fold(f64::MIN, f64::max);
    let (lo, hi) = if ys.is_empty() { (0.0, 1.0) } else { (lo, hi) };
    let span = (hi - lo).max(if log { 0.3 } else { 1e-9 });
    let pad = if b.value_labels.is_empty() {
        0.08
    } else {
        0.22
    };
    // Linear bars grow from 0; log bars from the bottom of the axis, a little below the
    // smallest value, so every bar shows (the dashed line marks 1).
    YAxis {
        lo: if log { lo - span * 0.1 } else { lo.min(0.0) },
        hi: b
            .y_max
            .unwrap_or(if hi > lo { hi + span * pad } else { 1.0 }),
        log,
    }
}

/// The chart of `b` on `area` with its caption, mesh and axis labels drawn.
fn bar_chart<'a, 'b>(
    area: &'b Area<'a>,
    b: &Bars,
    axis: YAxis,
) -> Result<BarChart<'a, 'b>, DrawError> {
    let (n, log) = (b.groups.len().max(1), b.log);
    let mut chart = ChartBuilder::on(area)
        .caption(b.title, (FONT, 15))
        .margin_left(10)
        .margin_right(20)
        .margin_top(4)
        .x_label_area_size(28)
        .y_label_area_size(76)
        .build_cartesian_2d(Slots(n), axis)
        .map_err(err)?;
    let groups = b.groups;
    let y_desc = if log {
        format!("{} (log scale)", b.y_desc)
    } else {
        b.y_desc.to_string()
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .x_label_formatter(&|x| {
            groups
                .get(x.floor().max(0.0) as usize)
                .cloned()
                .unwrap_or_default()
        })
        .x_label_style((FONT, 13))
        .y_label_style((FONT, 12))
        .y_label_formatter(&|v| tick(if log { 10f64.powf(*v) } else { *v }))
        .y_desc(y_desc)
        .axis_desc_style((FONT, 13))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// A label's white box and its text, in pixels from the point labelled.
type Label = (Rectangle<(i32, i32)>, Text<'static, (i32, i32), String>);

/// A value written on a white box just above a bar's top (upwards if wider than the bar).
fn value_label(text: String, bar_px: f64) -> Label {
    const SIZE: f64 = 13.0;
    let (w, h) = (text_width(&text, SIZE), (SIZE / 1.24).round() as i32);
    let style = TextStyle::from((FONT, SIZE));
    if (w as f64) < bar_px {
        let pos = Pos::new(HPos::Center, VPos::Bottom);
        (
            Rectangle::new([(-w / 2 - 2, -h - 3), (w / 2 + 2, -1)], WHITE.filled()),
            Text::new(text, (0, -2), style.pos(pos)),
        )
    } else {
        let style = style
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Left, VPos::Center));
        (
            Rectangle::new([(-h / 2 - 1, -w - 6), (h / 2 + 1, -1)], WHITE.filled()),
            Text::new(text, (0, -3), style),
        )
    }
}

/// A tick label: no trailing zeros, thousands as `k`.
pub fn tick(v: f64) -> String {
    let trim = |v: f64| {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".to_string()
        } else {
            s.to_string()
        }
    };
    if v.abs() >= 1e4 {
        format!("{}k", trim(v / 1000.0))
    } else {
        trim(v)
    }
}

/// One segment of a horizontal stacked bar: from `from` to `to` (% of the row), a fill
/// colour and a label written inside when it fits.
pub struct Segment {
    pub from: f64,
    pub to: f64,
    pub color: RGBColor,
    pub label: String,
}

/// Horizontal stacked bars, one row per label, 0–100 % of the row.
pub fn stacked_rows(
    area: &Area,
    x_desc: &str,
    rows: &[String],
    segs: &[Vec<Segment>],
) -> DrawResult {
    let n = rows.len().max(1);
    let label_px = rows.iter().map(|r| text_width(r, 13.0)).max().unwrap_or(40) + 16;
    let mut chart = ChartBuilder::on(area)
        .margin_left(10)
        .margin_right(24)
        .margin_top(4)
        .x_label_area_size(40)
        .y_label_area_size(label_px as u32)
        .build_cartesian_2d(0f64..100f64, Slots(n))
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .y_label_formatter(&|y| {
            // Row 0 at the top.
            let i = y.floor().max(0.0) as usize;
            rows.get(n.saturating_sub(1).saturating_sub(i))
                .cloned()
                .unwrap_or_default()
        })
        .x_desc(x_desc)
        .x_label_formatter(&|v| tick(*v))
        .x_label_style((FONT, 12))
        .y_label_style((FONT, 13))
        .axis_desc_style((FONT, 13))
        .draw()
        .map_err(err)?;
    let (span, _) = chart.plotting_area().dim_in_pixel();
    let px_per_pct = span as f64 / 100.0;
    for (r, row) in segs.iter().enumerate() {
        let y = (n - 1 - r) as f64;
        for s in row {
            let corners = [(s.from, y + 0.18), (s.to, y + 0.82)];
            chart
                .draw_series([Rectangle::new(corners, s.color.filled())])
                .map_err(err)?;
            chart
                .draw_series([Rectangle::new(corners, WHITE.stroke_width(1))])
                .map_err(err)?;
            if ((s.to - s.from) * px_per_pct) as i32 > text_width(&s.label, 11.0) + 6 {
                let pos = Pos::new(HPos::Center, VPos::Center);
                let t = Text::new(
                    s.label.clone(),
                    ((s.from + s.to) / 2.0, y + 0.5),
                    TextStyle::from((FONT, 11)).pos(pos),
                );
                chart.plotting_area().draw(&t).map_err(err)?;
            }
        }
    }
    Ok(())
}
