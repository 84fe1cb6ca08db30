//! The staircase figure: cycles per load against footprint (log x), one line per
//! staircase. Written as SVG text: plotters is a dependency of the report crate only, and
//! its chart helper draws bars, not lines, so using it would mean editing it.

use std::fmt::Write;

const W: f64 = 900.0;
const H: f64 = 500.0;
const L: f64 = 70.0;
const R: f64 = 170.0;
const T: f64 = 40.0;
const B: f64 = 50.0;
const COLORS: [&str; 5] = ["#4E79A7", "#F28E2B", "#E15759", "#59A14F", "#B07AA1"];

/// The plot's axes: log2 of the footprint from `x0` to `x1`, cycles from 0 to `y1`.
struct Scale {
    x0: f64,
    x1: f64,
    y1: f64,
}

impl Scale {
    /// Axes that fit every point of `series`, with 10 % headroom above.
    fn fit(series: &[(String, Vec<(u64, f64)>)]) -> Scale {
        let all = series.iter().flat_map(|(_, p)| p.iter());
        let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 1.0f64);
        for &(x, y) in all {
            x0 = x0.min((x as f64).log2());
            x1 = x1.max((x as f64).log2());
            y1 = y1.max(y);
        }
        if x0 >= x1 {
            (x0, x1) = (0.0, 1.0);
        }
        Scale {
            x0,
            x1,
            y1: y1 * 1.1,
        }
    }

    fn px(&self, x: u64) -> f64 {
        L + ((x as f64).log2() - self.x0) / (self.x1 - self.x0) * (W - L - R)
    }

    fn py(&self, y: f64) -> f64 {
        H - B - y / self.y1 * (H - T - B)
    }
}

/// An SVG of `series` (name, points of (footprint bytes, cycles per load)).
pub fn staircase(title: &str, series: &[(String, Vec<(u64, f64)>)]) -> String {
    let scale = Scale::fit(series);
    let mut s = String::new();
    frame(&mut s, title);
    axes(&mut s, &scale);
    lines(&mut s, &scale, series);
    s.push_str("</svg>\n");
    s
}

/// The SVG header, background, title and the two axis lines.
fn frame(s: &mut String, title: &str) {
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{}" y="22" text-anchor="middle" font-size="16">{}</text>"#,
        W / 2.0,
        escape(title)
    );
    let _ = writeln!(
        s,
        r#"<line x1="{L}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{L}" y1="{T}" x2="{L}" y2="{}" stroke="black"/>"#,
        H - B,
        W - R,
        H - B,
        H - B
    );
}

/// Ticks every 4x of footprint, six cycle grid lines, and the axis labels.
fn axes(s: &mut String, scale: &Scale) {
    for e in (scale.x0.ceil() as u32..=scale.x1.floor() as u32).step_by(2) {
        let x = scale.px(1u64 << e);
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            H - B,
            H - B + 5.0,
            H - B + 18.0,
            super::table::bytes(1u64 << e)
        );
    }
    for i in 0..=5 {
        let v = scale.y1 * i as f64 / 5.0;
        let y = scale.py(v);
        let _ = writeln!(
            s,
            r##"<line x1="{}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{v:.0}</text>"##,
            L,
            W - R,
            L - 5.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">footprint (log scale)</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">cycles per load</text>"#,
        (L + W - R) / 2.0,
        H - 12.0,
        H / 2.0,
        H / 2.0
    );
}

/// One polyline per series and its legend entry.
fn lines(s: &mut String, scale: &Scale, series: &[(String, Vec<(u64, f64)>)]) {
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", scale.px(x), scale.py(y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        let ly = T + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{}" width="14" height="4" fill="{c}"/><text x="{}" y="{}">{}</text>"#,
            W - R + 10.0,
            ly,
            W - R + 30.0,
            ly + 6.0,
            escape(name)
        );
    }
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
