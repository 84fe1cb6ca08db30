//! The CLAP study: Figure 18 (speed-up over s64k per workload and policy, geometric mean,
//! remote-access ratio) from `clap.csv`, and the page size CLAP chose per structure (the
//! data behind Table 4) from `clap_structures.csv`.

use crate::chart::{self, Bars, Segment};
use crate::csv::{distinct, Table};
use crate::{Figure, HtmlTable, Outcome, ReportError, Section};
use std::path::Path;

/// The baseline of Figure 18.
pub const BASELINE: &str = "s64k";

/// One run: the columns the figure needs.
#[derive(Debug, Clone)]
pub struct Run {
    pub workload: String,
    pub policy: String,
    pub cycles: f64,
    pub remote_ratio: f64,
}

/// `clap.csv` reduced to the runs.
pub fn runs(t: &Table) -> Result<Vec<Run>, ReportError> {
    let (w, p) = (t.column("workload")?, t.column("policy")?);
    let (c, r) = (t.column("cycles")?, t.column("remote_ratio")?);
    t.rows
        .iter()
        .map(|row| {
            Ok(Run {
                workload: t.text(row, w).to_string(),
                policy: t.text(row, p).to_string(),
                cycles: t.num(row, c)?,
                remote_ratio: t.num(row, r)?,
            })
        })
        .collect()
}

fn find<'a>(runs: &'a [Run], w: &str, p: &str) -> Option<&'a Run> {
    runs.iter().find(|r| r.workload == w && r.policy == p)
}

/// Speed-up of `p` over `base` on `w`: base cycles / policy cycles.
pub fn speedup(runs: &[Run], w: &str, p: &str, base: &str) -> Option<f64> {
    let (b, r) = (find(runs, w, base)?, find(runs, w, p)?);
    (r.cycles > 0.0).then(|| b.cycles / r.cycles)
}

pub use mcmvm_models::stats::geomean;

/// Workloads and policies in the order the file lists them.
pub fn axes(runs: &[Run]) -> (Vec<String>, Vec<String>) {
    (
        distinct(runs.iter().map(|r| r.workload.as_str())),
        distinct(runs.iter().map(|r| r.policy.as_str())),
    )
}

fn geomeans(runs: &[Run], ws: &[String], p: &str, base: &str) -> Option<f64> {
    let xs: Vec<f64> = ws
        .iter()
        .filter_map(|w| speedup(runs, w, p, base))
        .collect();
    geomean(&xs)
}

/// The page's CLAP section; writes `clap/fig-speedup.svg` and `clap/fig-page-sizes.svg`.
pub fn section(out: &Path, done: &mut Outcome) -> Result<Section, ReportError> {
    section_in(out, "clap", done)
}

/// The same for a sweep written to `out/sub` (`mcmvm sweep --suite clap --out DIR`).
pub fn section_in(out: &Path, sub: &str, done: &mut Outcome) -> Result<Section, ReportError> {
    let mut s = Section {
        title: "CLAP: page placement on a multi-chip-module GPU".into(),
        ..Section::default()
    };
    speedup_part(out, sub, &mut s, done)?;
    page_size_part(out, sub, &mut s, done)?;
    // The sweep's further tables, as it wrote them (absent: not run; `extras_note`).
    for (file, caption) in EXTRA_TABLES {
        if let Some(t) = Table::load(&out.join(format!("{sub}/{file}")))? {
            let mut table = raw(&t, &format!("{file}: {caption}"));
            table.folded = false;
            s.tables.push(table);
        }
    }
    Ok(s)
}

/// From `sub/clap.csv`: the speed-up figure, Figure 18's table and the raw runs.
fn speedup_part(
    out: &Path,
    sub: &str,
    s: &mut Section,
    done: &mut Outcome,
) -> Result<(), ReportError> {
    let csv_path = out.join(format!("{sub}/clap.csv"));
    let Some(t) = Table::load(&csv_path)? else {
        s.notes.push(crate::missing(
            &format!("{sub}/fig-speedup.svg"),
            &csv_path,
            "mcmvm sweep --suite clap",
        ));
        return Ok(());
    };
    let rs = runs(&t)?;
    speedup_figure(out, sub, &rs, done)?;
    s.figures.push(Figure {
        rel: format!("{sub}/fig-speedup.svg"),
        caption: format!(
            "Speed-up over {BASELINE} per workload and policy, with the geometric mean \
             (CLAP's Figure 18); below, each run's remote-access ratio."
        ),
    });
    s.tables.push(figure18_table(&rs));
    s.tables.push(raw(&t, "clap.csv: every run"));
    Ok(())
}

/// From `sub/clap_structures.csv`: the page-size figure, Table 4 and the raw rows.
fn page_size_part(
    out: &Path,
    sub: &str,
    s: &mut Section,
    done: &mut Outcome,
) -> Result<(), ReportError> {
    let st_path = out.join(format!("{sub}/clap_structures.csv"));
    let Some(t) = Table::load(&st_path)? else {
        s.notes.push(crate::missing(
            &format!("{sub}/fig-page-sizes.svg"),
            &st_path,
            "mcmvm sweep --suite clap",
        ));
        return Ok(());
    };
    let structs = structures(&t)?;
    if structs.is_empty() {
        s.notes.push(format!(
            "skipped {sub}/fig-page-sizes.svg: {} has no rows of policy clap",
            st_path.display()
        ));
    } else {
        page_size_figure(out, sub, &structs, done)?;
        s.figures.push(Figure {
            rel: format!("{sub}/fig-page-sizes.svg"),
            caption: "Page size CLAP chose for each data structure: one bar per \
                      workload, one segment per structure, as wide as its share of \
                      the workload's bytes (largest first)."
                .into(),
        });
        s.tables.push(table4(&structs));
    }
    s.tables
        .push(raw(&t, "clap_structures.csv: every structure of every run"));
    Ok(())
}

/// The further tables of `mcmvm sweep --suite clap` (file, caption); only its extra runs
/// write the last [`EXTRA_RUN_TABLES`].
const EXTRA_TABLES: [(&str, &str); 5] = [
    (
        "clap_paper.csv",
        "the paper's figures beside ours (fractions; difference = ours - paper)",
    ),
    (
        "clap_table2.csv",
        "Table 2: footprint, dominant kernel, L2 cache and L2 TLB MPKI and remote ratio \
         under s4k, s64k, s2m",
    ),
    (
        "clap_8chiplet.csv",
        "8 chiplets: speed-up over s64k and remote ratio",
    ),
    (
        "clap_pmm.csv",
        "PMM threshold: clap's geometric-mean speed-up over s64k",
    ),
    (
        "clap_min_blocks.csv",
        "MMA's fully mapped VA blocks needed: clap's speed-up over s64k",
    ),
];

/// The last of [`EXTRA_TABLES`] come from the extra runs (`--no-extras` leaves them out):
/// 8 chiplets, the PMM threshold and MMA's block count.
const EXTRA_RUN_TABLES: usize = 3;

/// The page's note when the CLAP sweep in `out/sub` ran without its extra runs (`make
/// run` passes `--no-extras`): how to add them. Not a section note, which the sweep itself
/// prints before its extra runs are made.
pub fn extras_note(out: &Path, sub: &str) -> Option<String> {
    let dir = out.join(sub);
    let absent = EXTRA_TABLES[EXTRA_TABLES.len() - EXTRA_RUN_TABLES..]
        .iter()
        .any(|(f, _)| !dir.join(f).is_file());
    (absent && dir.join("clap.csv").is_file()).then(|| {
        format!(
            "{sub}: the extra runs (8 chiplets, PMM threshold, MMA's block count) were not \
             run (--no-extras): `make clap-extras`, or `mcmvm sweep --suite clap --resume \
             --out {}`, adds them without repeating the main runs",
            dir.display()
        )
    })
}

/// A whole CSV as a folded table.
pub fn raw(t: &Table, caption: &str) -> HtmlTable {
    HtmlTable {
        caption: caption.into(),
        header: t.header.clone(),
        rows: t.rows.iter().map(|r| r.fields.clone()).collect(),
        folded: true,
    }
}

fn speedup_figure(
    out: &Path,
    sub: &str,
    rs: &[Run],
    done: &mut Outcome,
) -> Result<(), ReportError> {
    let (ws, ps) = axes(rs);
    let series = colored(&ps);
    let mut groups = ws.clone();
    groups.push("geomean".into());
    let speed = speedups(rs, &ws, &ps);
    let remote = remote_ratios(rs, &ws, &ps);
    let mut remote_groups = ws.clone();
    remote_groups.push("mean".into());
    let log = chart::wide_spread(&speed);
    let width = (220 + 95 * groups.len() as u32).max(900);
    crate::write_svg(
        out,
        &format!("{sub}/fig-speedup.svg"),
        (width, 840),
        |root| {
            let title = format!("CLAP study: speed-up over {BASELINE} (higher is better)");
            let rest = chart::title_and_legend(root, &title, &series)?;
            let (top, bottom) = rest.split_vertically(470);
            chart::bars(
                &top,
                &Bars {
                    title: "speed-up per workload, geometric mean at the right",
                    y_desc: &format!("speed-up over {BASELINE}"),
                    groups: &groups,
                    series: &series,
                    values: &speed,
                    reference: Some(1.0),
                    y_max: None,
                    log,
                    value_labels: &[groups.len() - 1],
                    fmt: |v| format!("{v:.2}"),
                },
            )?;
            chart::bars(
                &bottom,
                &Bars {
                    title: "remote-access ratio (line accesses served by another chiplet), \
                            mean at the right",
                    y_desc: "remote accesses, %",
                    groups: &remote_groups,
                    series: &series,
                    values: &remote,
                    reference: None,
                    y_max: Some(100.0),
                    log: false,
                    value_labels: &[],
                    fmt: |v| format!("{v:.0}"),
                },
            )
        },
        done,
    )
}

/// Each name with its palette colour, in order (a legend).
fn colored(names: &[String]) -> Vec<(String, plotters::style::RGBColor)> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), chart::color(i)))
        .collect()
}

/// `[workload][policy]` speed-ups over [`BASELINE`], then each policy's geometric mean.
fn speedups(rs: &[Run], ws: &[String], ps: &[String]) -> Vec<Vec<Option<f64>>> {
    let mut speed: Vec<Vec<Option<f64>>> = ws
        .iter()
        .map(|w| ps.iter().map(|p| speedup(rs, w, p, BASELINE)).collect())
        .collect();
    speed.push(ps.iter().map(|p| geomeans(rs, ws, p, BASELINE)).collect());
    speed
}

/// `[workload][policy]` remote-access ratios in percent, then each policy's arithmetic
/// mean (under the geomean, so the two panels' groups line up).
fn remote_ratios(rs: &[Run], ws: &[String], ps: &[String]) -> Vec<Vec<Option<f64>>> {
    let mut remote: Vec<Vec<Option<f64>>> = ws
        .iter()
        .map(|w| {
            ps.iter()
                .map(|p| find(rs, w, p).map(|r| 100.0 * r.remote_ratio))
                .collect()
        })
        .collect();
    let mean = |s: usize| {
        let v: Vec<f64> = remote.iter().filter_map(|r| r[s]).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let means: Vec<Option<f64>> = (0..ps.len()).map(mean).collect();
    remote.push(means);
    remote
}

fn figure18_table(rs: &[Run]) -> HtmlTable {
    let (ws, ps) = axes(rs);
    let mut rows: Vec<Vec<String>> =
        ws.iter()
            .map(|w| {
                let mut row = vec![w.clone()];
                row.extend(ps.iter().map(|p| {
                    match (speedup(rs, w, p, BASELINE), find(rs, w, p)) {
                        (Some(x), Some(r)) => format!("{x:.3} ({:.1}%)", 100.0 * r.remote_ratio),
                        (None, Some(r)) => format!("- ({:.1}%)", 100.0 * r.remote_ratio),
                        _ => "failed".into(),
                    }
                }));
                row
            })
            .collect();
    let mut g = vec!["geomean".to_string()];
    g.extend(
        ps.iter()
            .map(|p| geomeans(rs, &ws, p, BASELINE).map_or("-".into(), |x| format!("{x:.3}"))),
    );
    rows.push(g);
    for base in [BASELINE, "s2m"] {
        if let Some(x) = geomeans(rs, &ws, "clap", base) {
            let mut row = vec![format!("CLAP vs {base}")];
            row.push(format!("{x:.3} ({:+.1}%)", 100.0 * (x - 1.0)));
            row.resize(ps.len() + 1, String::new());
            rows.push(row);
        }
    }
    let mut header = vec!["workload".to_string()];
    header.extend(ps.iter().cloned());
    HtmlTable {
        caption: format!("Figure 18: speed-up over {BASELINE} (remote-access ratio)"),
        header,
        rows,
        folded: false,
    }
}

/// One structure under the clap policy.
#[derive(Debug, Clone)]
pub struct Structure {
    pub workload: String,
    pub name: String,
    pub bytes: f64,
    pub page_size: String,
    /// What happened to it (`128KB (MMA)`, `OLP (fallback: …): 2MB`); the page size in
    /// files written before the column existed.
    pub table4: String,
}

/// The clap-policy rows of `clap_structures.csv`.
pub fn structures(t: &Table) -> Result<Vec<Structure>, ReportError> {
    let (w, p, n) = (
        t.column("workload")?,
        t.column("policy")?,
        t.column("structure")?,
    );
    let (b, ps) = (t.column("bytes")?, t.column("page_size")?);
    let label = t.column("table4").unwrap_or(ps);
    let mut out = Vec::new();
    for row in t.rows.iter().filter(|r| t.text(r, p) == "clap") {
        out.push(Structure {
            workload: t.text(row, w).to_string(),
            name: t.text(row, n).to_string(),
            bytes: t.num(row, b)?,
            page_size: t.text(row, ps).to_string(),
            table4: t.text(row, label).to_string(),
        });
    }
    Ok(out)
}

/// Bytes of a page-size label ("4KB", "2MB"); None for the others ("OLP", "-").
fn label_bytes(l: &str) -> Option<u64> {
    let (num, unit) = l.split_at(l.find(|c: char| !c.is_ascii_digit())?);
    let k = match unit {
        "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        _ => return None,
    };
    num.parse::<u64>().ok().map(|n| n * k)
}

/// The page sizes present, smallest first, then the other placements by name.
pub fn page_sizes(structs: &[Structure]) -> Vec<String> {
    let mut v = distinct(structs.iter().map(|s| s.page_size.as_str()));
    v.sort_by_key(|l| (label_bytes(l).unwrap_or(u64::MAX), l.clone()));
    v
}

fn mb(bytes: f64) -> String {
    let m = bytes / 1048576.0;
    if m >= 10.0 {
        format!("{m:.0} MB")
    } else {
        format!("{m:.1} MB")
    }
}

fn page_size_figure(
    out: &Path,
    sub: &str,
    structs: &[Structure],
    done: &mut Outcome,
) -> Result<(), ReportError> {
    let sizes = page_sizes(structs);
    let legend = colored(&sizes);
    let ws = distinct(structs.iter().map(|s| s.workload.as_str()));
    let mut labels = Vec::new();
    let mut segs = Vec::new();
    for w in &ws {
        let mut mine: Vec<&Structure> = structs.iter().filter(|s| &s.workload == w).collect();
        mine.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
        let total: f64 = mine.iter().map(|s| s.bytes).sum::<f64>().max(1.0);
        labels.push(format!("{w} ({})", mb(total)));
        let mut at = 0.0;
        let mut row = Vec::new();
        for s in mine {
            let to = at + 100.0 * s.bytes / total;
            let c = sizes.iter().position(|l| l == &s.page_size).unwrap_or(0);
            row.push(Segment {
                from: at,
                to,
                color: chart::color(c),
                label: s.name.clone(),
            });
            at = to;
        }
        segs.push(row);
    }
    let height = 150 + 44 * ws.len() as u32;
    crate::write_svg(
        out,
        &format!("{sub}/fig-page-sizes.svg"),
        (1200, height),
        |root| {
            let title = "CLAP study: page size chosen per data structure under clap";
            let rest = chart::title_and_legend(root, title, &legend)?;
            chart::stacked_rows(&rest, "share of the workload's bytes, %", &labels, &segs)
        },
        done,
    )
}

fn table4(structs: &[Structure]) -> HtmlTable {
    let ws = distinct(structs.iter().map(|s| s.workload.as_str()));
    let rows = ws
        .iter()
        .map(|w| {
            let mut mine: Vec<&Structure> = structs.iter().filter(|s| &s.workload == w).collect();
            mine.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
            let mut row = vec![w.clone()];
            row.extend((0..3).map(|i| {
                mine.get(i).map_or(String::new(), |s| {
                    format!("{} {} ({})", s.name, s.table4, mb(s.bytes))
                })
            }));
            row
        })
        .collect();
    HtmlTable {
        caption: "Table 4: page size chosen by CLAP for the three largest structures (MMA's \
                  choice, or OLP as its fallback with why and the size OLP made)"
            .into(),
        header: ["workload", "largest", "second", "third"]
            .map(String::from)
            .to_vec(),
        rows,
        folded: false,
    }
}
