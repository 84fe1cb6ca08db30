//! The synthesis flow on a hand-written 8-bit accumulator: eight flip-flops, a real area,
//! a transistor count; and lint catches a width mismatch.

use mcmvm_synth::{lint, synthesize, Tools};

const ACC: &str = "module acc(input clock, input reset, input [7:0] a, output reg [7:0] q);
always @(posedge clock) if (reset) q <= 8'd0; else q <= q + a;
endmodule
";

// A 16-bit value assigned to an 8-bit register is a WIDTH warning.
const WIDE: &str = "module wide(input clock, input [15:0] b, output reg [7:0] q);
always @(posedge clock) q <= b;
endmodule
";

fn work(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../out/test-synth")
        .join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn accumulator_maps_to_eight_flip_flops_with_area_and_transistors() {
    let tools = Tools::discover().expect("yosys and the Liberty file (run `make deps`)");
    let dir = work("acc");
    let v = dir.join("acc.v");
    std::fs::write(&v, ACC).unwrap();
    let r = synthesize(&tools, &v, "acc", &dir).unwrap();
    assert_eq!(r.flip_flops, 8, "{r:?}");
    assert!(r.area_um2 > 0.0 && r.cells > r.flip_flops, "{r:?}");
    // 8 DFFs at 16 transistors each plus the adder.
    assert!(r.transistors > 8 * 16, "{r:?}");
    assert_eq!(r.paper_mm2, None);
}

#[test]
fn lint_is_clean_on_sized_logic_and_reports_width_warnings() {
    let tools = Tools::discover().expect("yosys and the Liberty file (run `make deps`)");
    let dir = work("lint");
    let good = dir.join("acc.v");
    std::fs::write(&good, ACC).unwrap();
    let r = lint(&tools, &good, "acc", &dir).unwrap();
    assert!(r.clean(), "{r:?}");
    let bad = dir.join("wide.v");
    std::fs::write(&bad, WIDE).unwrap();
    let r = lint(&tools, &bad, "wide", &dir).unwrap();
    assert!(r.verilator.iter().any(|m| m.contains("WIDTH")), "{r:?}");
}
