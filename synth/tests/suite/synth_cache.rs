//! The synthesis cache (`mcmvm_synth::cache`) on the 8-bit accumulator: a second call is
//! served from the entry with the same report and leaves the netlist in its work directory;
//! a truncated or corrupted entry is synthesised again and rewritten; other Verilog is
//! another entry. Lint results (`mcmvm_synth::lint_cache`) likewise.

use mcmvm_synth::cache::{synthesize_cached, Source};
use mcmvm_synth::library::Library;
use mcmvm_synth::Tools;
use std::path::{Path, PathBuf};

const ACC: &str = "module acc(input clock, input reset, input [7:0] a, output reg [7:0] q);
always @(posedge clock) if (reset) q <= 8'd0; else q <= q + a;
endmodule
";

/// A fresh directory under out/test-synth.
fn fresh(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../out/test-synth/cache")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The one entry file in `root`.
fn entry(root: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

#[test]
fn a_cached_result_is_served_checked_and_rebuilt_when_damaged() {
    let tools = Tools::discover().unwrap_or_else(|e| panic!("{e}"));
    let lib = Library::osu018(&tools);
    let dir = fresh("acc");
    let (root, work) = (dir.join("cache"), dir.join("work"));
    let v = dir.join("acc.v");
    std::fs::write(&v, ACC).unwrap();
    let run = |work: &Path| synthesize_cached(&root, &tools, &lib, &v, "acc", work).unwrap();

    let (fresh_report, source) = run(&work);
    assert_eq!(source, Source::Synthesised);
    assert_eq!(fresh_report.flip_flops, 8);
    let netlist = std::fs::read_to_string(work.join("acc_osu018_netlist.v")).unwrap();

    // Served: the same report, bit for bit, and the netlist put back where power reads it.
    let other_work = dir.join("work2");
    let (served, source) = run(&other_work);
    assert_eq!((served, source), (fresh_report.clone(), Source::Cache));
    let restored = std::fs::read_to_string(other_work.join("acc_osu018_netlist.v")).unwrap();
    assert_eq!(restored, netlist);

    // Truncated: not parsed, synthesised again, rewritten whole.
    let path = entry(&root);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    assert_eq!(run(&work), (fresh_report.clone(), Source::Rebuilt));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert_eq!(run(&work).1, Source::Cache);

    // Corrupted: parses, but a figure no longer matches the entry's hash.
    let cells = format!("\"cells\":{}", fresh_report.cells);
    assert!(text.contains(&cells), "{cells} not in the entry");
    let forged = text.replacen(&cells, &format!("\"cells\":{}", fresh_report.cells + 1), 1);
    std::fs::write(&path, forged).unwrap();
    assert_eq!(run(&work), (fresh_report, Source::Rebuilt));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    // Other Verilog, another key: a second entry, not the first one served.
    let v2 = dir.join("acc2.v");
    std::fs::write(&v2, ACC.replace("q + a", "q - a")).unwrap();
    let (_, source) = synthesize_cached(&root, &tools, &lib, &v2, "acc", &work).unwrap();
    assert_eq!(source, Source::Synthesised);
    let entries = std::fs::read_dir(&root).unwrap().count();
    assert_eq!(entries, 2, "one entry per Verilog, no temporary file left");
}

// A 16-bit value assigned to an 8-bit register: a WIDTH warning naming the file.
const WIDE: &str = "module wide(input clock, input [15:0] b, output reg [7:0] q);
always @(posedge clock) q <= b;
endmodule
";

#[test]
fn a_cached_lint_names_the_file_linted_now_and_is_linted_again_when_damaged() {
    use mcmvm_synth::lint_cache::lint_cached;
    let tools = Tools::discover().unwrap_or_else(|e| panic!("{e}"));
    let dir = fresh("lint");
    let root = dir.join("root");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("wide.v"), WIDE).unwrap();
    }
    let lint = |d: &Path| {
        lint_cached(&root, &tools, &d.join("wide.v"), "wide", &d.join("work"))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (first, src) = lint(&a);
    assert_eq!(src, Source::Synthesised);
    let width = |r: &mcmvm_synth::LintReport| {
        r.verilator
            .iter()
            .find(|m| m.contains("WIDTH"))
            .cloned()
            .unwrap_or_else(|| panic!("no WIDTH warning: {r:?}"))
    };
    let wa = width(&first);
    assert!(wa.contains(&a.join("wide.v").display().to_string()), "{wa}");
    // The same Verilog elsewhere: from the entry, naming the file linted now.
    let (second, src) = lint(&b);
    assert_eq!(src, Source::Cache);
    let wb = width(&second);
    let (pa, pb) = (
        a.join("wide.v").display().to_string(),
        b.join("wide.v").display().to_string(),
    );
    assert_eq!(wb, wa.replace(&pa, &pb));
    assert_eq!(second.yosys, first.yosys);
    // A damaged entry is linted again and rewritten.
    let e = entry(&root);
    std::fs::write(&e, "{\"format\":").unwrap();
    let (third, src) = lint(&a);
    assert_eq!(src, Source::Rebuilt);
    assert_eq!(third.verilator, first.verilator);
    assert_eq!(lint(&a).1, Source::Cache);
}
