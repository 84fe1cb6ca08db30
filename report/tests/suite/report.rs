//! The report on small inputs written by the studies' own writers: a tiny CLAP sweep
//! (`gpu::sweep::csv` / `alloc_csv` on real `simulate` runs at scale 0.01), a tiny Forest
//! sweep (`SweepReport::write`) and the hardware summary's area reports. Every figure the
//! page references must exist and parse as SVG, with one bar per workload × policy.

use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{sweep, GpuConfig, RunReport};
use mcmvm_models::uvm::{sweep_forest, SweepOptions, UvmConfig, UvmGpu};
use mcmvm_report::{build, Options};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const CLAP_WORKLOADS: [&str; 2] = ["bfs", "sssp"];
const CLAP_POLICIES: [PolicyKind; 3] = [PolicyKind::S64k, PolicyKind::S2m, PolicyKind::Clap];
const FOREST_WORKLOADS: [&str; 2] = ["ls", "hchi"];
const OVERSUBS: [f64; 2] = [1.25, 1.5];

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn configs() -> Vec<PathBuf> {
    [
        "configs/mcm-4chiplet.toml",
        "configs/uvm-turing.toml",
        "configs/hw.toml",
    ]
    .map(repo)
    .to_vec()
}

/// The CLAP runs, simulated once for every test.
fn clap_runs() -> &'static [RunReport] {
    static RUNS: OnceLock<Vec<RunReport>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let cfg = GpuConfig::load(&repo("configs/mcm-4chiplet.toml")).expect("config loads");
        let mut jobs = sweep::clap_jobs(&CLAP_POLICIES);
        jobs.retain(|j| CLAP_WORKLOADS.contains(&j.workload.as_str()));
        jobs.iter()
            .map(|j| sweep::run_job(&cfg, j, 0.01, 1).expect("tiny CLAP run"))
            .collect()
    })
}

/// `forest.csv` and `forest.json` of a tiny Forest sweep (the Forest study's GPU with 8 of
/// its SMs), written once.
fn forest_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cfg = UvmConfig::load(&repo("configs/uvm-turing.toml"), &[]).expect("config loads");
        let mut gpu = GpuConfig::load(&repo("configs/gpu-turing.toml")).expect("config loads");
        gpu.gpu.sms_per_chiplet = 8;
        let mut opts = SweepOptions::new(cfg, UvmGpu::new(gpu));
        opts.workloads = FOREST_WORKLOADS.map(String::from).to_vec();
        opts.oversubs = OVERSUBS.to_vec();
        opts.scale = 0.02;
        opts.out_dir = Some(dir.path().to_path_buf());
        sweep_forest(&opts).expect("tiny Forest sweep");
        dir
    })
    .path()
}

fn area(block: &str, library: &str, node_nm: f64, um2: f64) -> mcmvm_synth::AreaReport {
    mcmvm_synth::AreaReport {
        block: block.into(),
        library: library.into(),
        node_nm,
        area_um2: um2,
        logic_area_um2: um2 * 0.6,
        nand2_equivalents: um2 / 30.0,
        min_period_ns: 2.0,
        combinational: false,
        max_clock_mhz: 500.0,
        paper_clock_mhz: Some(1132.0),
        cells: 100,
        flip_flops: 10,
        transistors: 1000,
        area_mm2_28nm: um2 * (28.0 / node_nm).powi(2) / 1e6,
        paper_mm2: mcmvm_synth::area::paper_mm2(block),
        cell_counts: BTreeMap::new(),
    }
}

/// `hw-summary.json` as `mcmvm hw` writes it (src/cmd/hw.rs).
fn hw_summary() -> String {
    let rows: Vec<_> = [
        ("remote_tracker", 400_000.0),
        ("tlb_coalescer", 90_000.0),
        ("access_time_tracker", 250_000.0),
    ]
    .iter()
    .map(|&(b, a)| {
        serde_json::json!({
            "block": b, "lint": "clean", "area": area(b, "osu018", 180.0, a), "cycles": 1000,
            "mismatch": false, "wave": format!("out/waves/{b}.vcd"),
        })
    })
    .collect();
    serde_json::to_string_pretty(&rows).unwrap()
}

/// The CLAP sweep's extra runs' tables, as `mcmvm sweep --suite clap` writes them (one row
/// each; the report shows them as they are).
const EXTRA_RUN_CSVS: [(&str, &str); 3] = [
    (
        "clap_8chiplet.csv",
        "workload,policy,speedup_over_s64k,remote_ratio\nbfs,clap,1.010000,0.400000\n",
    ),
    (
        "clap_pmm.csv",
        "pmm_fraction,default,geomean,vs_default,fallbacks,workloads,bfs\n\
         0.2,true,1.000000,0.000000,12,1,1.000000\n",
    ),
    (
        "clap_min_blocks.csv",
        "mma_min_full_blocks,default,geomean,vs_default,fallbacks,workloads,bfs\n\
         1,true,1.000000,0.000000,12,1,1.000000\n",
    ),
];

/// Every input present, in a fresh directory.
fn full_out() -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    let clap = out.path().join("clap");
    std::fs::create_dir_all(&clap).unwrap();
    std::fs::write(clap.join("clap.csv"), sweep::csv(clap_runs())).unwrap();
    std::fs::write(
        clap.join("clap_structures.csv"),
        sweep::alloc_csv(clap_runs()),
    )
    .unwrap();
    for (file, text) in EXTRA_RUN_CSVS {
        std::fs::write(clap.join(file), text).unwrap();
    }
    let forest = out.path().join("forest");
    std::fs::create_dir_all(&forest).unwrap();
    for f in ["forest.csv", "forest.json"] {
        std::fs::copy(forest_dir().join(f), forest.join(f)).unwrap();
    }
    std::fs::write(out.path().join("hw-summary.json"), hw_summary()).unwrap();
    for suite in ["clap", "forest"] {
        let dir = out.path().join(format!("robustness-{suite}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("robustness.json"), robustness_json(suite)).unwrap();
    }
    out
}

/// `robustness.json` of a two-point box, from the models' own types as the sweep writes it.
fn robustness_json(suite: &str) -> String {
    use mcmvm_models::calibrate::robustness as rb;
    let heads = rb::FOREST_HEADLINES.to_vec();
    let point = |point: usize, label: &str, x: f64| rb::PointFigures {
        point,
        label: label.into(),
        settings: vec![],
        figures: vec![Some(x), Some(x * 0.98)],
    };
    let points = vec![point(0, "config", 1.9), point(1, "corner-1", 2.1)];
    serde_json::json!({
        "suite": suite, "scale": 0.02, "seed": 1, "design": "corners",
        "headlines": rb::ranges(&heads, &points), "points": points,
    })
    .to_string()
}

/// Values of `attr="..."` in the page.
fn refs(html: &str, attr: &str) -> Vec<String> {
    let pat = format!("{attr}=\"");
    html.match_indices(&pat)
        .filter_map(|(i, _)| {
            let rest = &html[i + pat.len()..];
            rest.find('"').map(|j| rest[..j].to_string())
        })
        .collect()
}

/// Fill colours of the filled rectangles other than white/black, with their counts.
fn bar_fills(svg_text: &str) -> BTreeMap<String, usize> {
    let doc = roxmltree::Document::parse(svg_text).expect("SVG parses as XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let mut m = BTreeMap::new();
    for n in doc.descendants().filter(|n| n.has_tag_name("rect")) {
        let fill = n.attribute("fill").unwrap_or("none");
        if !["none", "#FFFFFF", "#000000"].contains(&fill) {
            *m.entry(fill.to_string()).or_insert(0) += 1;
        }
    }
    m
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn full_report_has_every_figure_with_one_bar_per_workload_and_policy() {
    let out = full_out();
    let done = build(&Options {
        out: out.path().to_path_buf(),
        configs: configs(),
    })
    .expect("report builds");
    assert!(done.notes.is_empty(), "{:?}", done.notes);
    let html_path = out.path().join("report.html");
    assert_eq!(done.written.last(), Some(&html_path));
    let html = read(&html_path);
    let mut figs: Vec<String> = refs(&html, "src");
    figs.extend(refs(&html, "data"));
    let want = [
        "clap/fig-speedup.svg",
        "clap/fig-page-sizes.svg",
        "forest/fig-speedup.svg",
        "forest/fig-curve.svg",
        "forest/fig-profiling.svg",
        "fig-area.svg",
        "robustness-clap/fig-range.svg",
        "robustness-forest/fig-range.svg",
    ];
    assert_eq!(figs, want);
    let mut svgs = BTreeMap::new();
    for f in &figs {
        let p = out.path().join(f);
        assert!(done.written.contains(&p), "{f} not reported as written");
        svgs.insert(f.as_str(), bar_fills(&read(&p)));
    }

    // CLAP: workloads × policies speed-up bars plus a geomean group, the same bars of remote
    // ratio plus their mean, and one legend swatch per policy — each policy in its colour.
    let (w, p) = (CLAP_WORKLOADS.len(), CLAP_POLICIES.len());
    let fills = &svgs["clap/fig-speedup.svg"];
    assert_eq!(fills.len(), p, "{fills:?}");
    assert!(
        fills.values().all(|&n| n == (w + 1) + (w + 1) + 1),
        "{fills:?}"
    );

    // Page sizes: one segment per structure under clap, one swatch per page size.
    let structs: Vec<_> = clap_runs()
        .iter()
        .filter(|r| r.policy == "clap")
        .flat_map(|r| r.allocs.iter())
        .collect();
    let mut sizes: Vec<&str> = structs.iter().map(|a| a.page_size.as_str()).collect();
    sizes.sort();
    sizes.dedup();
    let fills = &svgs["clap/fig-page-sizes.svg"];
    assert_eq!(fills.values().sum::<usize>(), structs.len() + sizes.len());

    // Forest: per oversubscription panel, workloads + geomean (or mean) for each of Forest
    // and SpecForest (speed-ups: and the two ablations); a legend swatch each.
    let per_series = OVERSUBS.len() * (FOREST_WORKLOADS.len() + 1) + 1;
    for (f, n) in [
        ("forest/fig-speedup.svg", 4),
        ("forest/fig-profiling.svg", 2),
    ] {
        let fills = &svgs[f];
        assert_eq!(fills.len(), n, "{f}: {fills:?}");
        assert!(fills.values().all(|&n| n == per_series), "{f}: {fills:?}");
    }
    // The curve: two panels (all workloads, without the outlier) of one bar per
    // oversubscription for each of the four policies, and a swatch each.
    let fills = &svgs["forest/fig-curve.svg"];
    assert_eq!(fills.len(), 4, "curve: {fills:?}");
    assert!(
        fills.values().all(|&n| n == 2 * OVERSUBS.len() + 1),
        "{fills:?}"
    );

    // Area (one library): 3 blocks, 3 estimates, 2 paper figures (none for the ATT), and a
    // swatch for the library and one for the paper.
    assert_eq!(svgs["fig-area.svg"].values().sum::<usize>(), 3 + 3 + 2 + 2);

    // Tables, configuration files and the date are on the page.
    for text in [
        "Figure 18",
        "Table 4",
        "geomean",
        "remote_tracker",
        "[remote_tracker]",
        "oversubscription = 1.5",
    ] {
        assert!(html.contains(text), "report.html lacks `{text}`");
    }
    for w in CLAP_WORKLOADS.iter().chain(&FOREST_WORKLOADS) {
        assert!(
            html.contains(&format!("<td>{w}</td>")),
            "no table row for {w}"
        );
    }
    assert!(html.contains(" UTC by <code>mcmvm report</code>"));

    // To look at the figures: MCMVM_REPORT_KEEP=DIR keeps a copy of the page and figures.
    if let Ok(keep) = std::env::var("MCMVM_REPORT_KEEP") {
        for f in figs.iter().map(String::as_str).chain(["report.html"]) {
            let to = Path::new(&keep).join(f);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(out.path().join(f), to).unwrap();
        }
    }
}

#[test]
fn synth_json_is_read_when_present() {
    let out = tempfile::tempdir().unwrap();
    // `mcmvm synth --json`: every block on each of two libraries.
    let mut reports = Vec::new();
    for (lib, nm) in [("osu018", 180.0), ("sky130hd", 130.0)] {
        reports.push(area("remote_tracker", lib, nm, 1000.0));
        reports.push(area("tlb_coalescer", lib, nm, 500.0));
    }
    std::fs::write(
        out.path().join("synth.json"),
        serde_json::to_string_pretty(&reports).unwrap(),
    )
    .unwrap();
    let done = build(&Options {
        out: out.path().to_path_buf(),
        configs: vec![],
    })
    .unwrap();
    let fills = bar_fills(&read(&out.path().join("fig-area.svg")));
    // Per library: 2 blocks in each panel and a swatch; the paper: 2 bars and a swatch.
    assert_eq!(fills.len(), 3, "{fills:?}");
    assert!(
        fills.values().all(|&n| n == 2 + 2 + 1 || n == 2 + 1),
        "{fills:?}"
    );
    assert_eq!(fills.values().sum::<usize>(), 5 + 5 + 3);
    let html = read(&out.path().join("report.html"));
    assert!(html.contains("<td>sky130hd</td>"));
    assert_eq!(done.written.len(), 2);
}

#[test]
fn missing_inputs_are_skipped_with_a_note() {
    let out = tempfile::tempdir().unwrap();
    let done = build(&Options {
        out: out.path().to_path_buf(),
        configs: vec![out.path().join("nope.toml")],
    })
    .expect("an empty directory still gets a page");
    assert_eq!(done.written, vec![out.path().join("report.html")]);
    let notes = done.notes.join("\n");
    for f in [
        "clap.csv",
        "clap_structures.csv",
        "forest.csv",
        "hw-summary.json",
        "robustness-clap/robustness.json",
        "robustness-forest/robustness.json",
        "nope.toml",
    ] {
        assert!(notes.contains(f), "no note for {f}: {notes}");
    }
    assert_eq!(done.notes.len(), 7, "{notes}");
    let html = read(&out.path().join("report.html"));
    assert!(refs(&html, "src").is_empty());
}

#[test]
fn malformed_inputs_name_the_file_and_line() {
    let out = tempfile::tempdir().unwrap();
    let clap = out.path().join("clap");
    std::fs::create_dir_all(&clap).unwrap();
    let mut csv = sweep::csv(&clap_runs()[..2]);
    csv.push_str("bfs,clap,4\n");
    std::fs::write(clap.join("clap.csv"), &csv).unwrap();
    let opts = Options {
        out: out.path().to_path_buf(),
        configs: vec![],
    };
    let e = build(&opts).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:4: ", clap.join("clap.csv").display())),
        "{e}"
    );

    // Row 1's cycles (column 6) is not a number.
    let mut lines: Vec<String> = sweep::csv(&clap_runs()[..2])
        .lines()
        .map(String::from)
        .collect();
    let mut fields: Vec<&str> = lines[1].split(',').collect();
    fields[5] = "many";
    lines[1] = fields.join(",");
    std::fs::write(clap.join("clap.csv"), lines.join("\n")).unwrap();
    let e = build(&opts).unwrap_err().to_string();
    assert!(e.contains("clap.csv:2: "), "{e}");

    std::fs::remove_file(clap.join("clap.csv")).unwrap();
    std::fs::write(
        out.path().join("hw-summary.json"),
        "[\n  {\"block\": \"rt\",\n  oops\n]",
    )
    .unwrap();
    let e = build(&opts).unwrap_err().to_string();
    assert!(e.contains("hw-summary.json:3: "), "{e}");
}

#[test]
fn a_clap_sweep_without_its_extra_runs_gets_one_note_saying_how_to_add_them() {
    for absent in [
        &["clap_8chiplet.csv"][..],
        &["clap_8chiplet.csv", "clap_pmm.csv", "clap_min_blocks.csv"],
    ] {
        let out = full_out();
        for f in absent {
            std::fs::remove_file(out.path().join("clap").join(f)).unwrap();
        }
        let done = build(&Options {
            out: out.path().to_path_buf(),
            configs: configs(),
        })
        .expect("report builds");
        assert_eq!(done.notes.len(), 1, "{absent:?}: {:?}", done.notes);
        assert!(
            done.notes[0].contains("make clap-extras") && done.notes[0].contains("--resume"),
            "{}",
            done.notes[0]
        );
        let html = read(&out.path().join("report.html"));
        assert!(
            !html.contains("clap_8chiplet.csv: "),
            "an absent table is not shown"
        );
        assert_eq!(
            html.contains("clap_pmm.csv: "),
            absent.len() == 1,
            "{absent:?}"
        );
    }
}
