//! The synthesis flow on a hand-written 8-bit accumulator: eight flip-flops, a real area,
//! a transistor count; a purely combinational adder is timed input to output; and lint
//! catches a width mismatch.

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

/// yosys and the Liberty file, or a panic with the error's own text ("yosys not found on
/// PATH: install it with apt-get install yosys (or make deps)"): `expect` would print the
/// error's Debug form, which hides the install command in struct fields.
fn tools() -> Tools {
    Tools::discover().unwrap_or_else(|e| panic!("{e}"))
}

fn work(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../out/test-synth")
        .join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn accumulator_maps_to_eight_flip_flops_with_area_and_transistors() {
    let tools = tools();
    let dir = work("acc");
    let v = dir.join("acc.v");
    std::fs::write(&v, ACC).unwrap();
    let r = synthesize(&tools, &v, "acc", &dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.flip_flops, 8, "{r:?}");
    assert!(r.area_um2 > 0.0 && r.cells > r.flip_flops, "{r:?}");
    // 8 DFFs at 16 transistors each plus the adder.
    assert!(r.transistors > 8 * 16, "{r:?}");
    assert_eq!(r.paper_mm2, None);
}

#[test]
fn lint_is_clean_on_sized_logic_and_reports_width_warnings() {
    let tools = tools();
    let dir = work("lint");
    let good = dir.join("acc.v");
    std::fs::write(&good, ACC).unwrap();
    // A missing Verilator is an error of `lint` naming its package: shown, not unwrapped.
    let r = lint(&tools, &good, "acc", &dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.clean(), "{r:?}");
    let bad = dir.join("wide.v");
    std::fs::write(&bad, WIDE).unwrap();
    let r = lint(&tools, &bad, "wide", &dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.verilator.iter().any(|m| m.contains("WIDTH")), "{r:?}");
}

#[test]
fn accumulator_on_sky130_has_its_flip_flops_logic_area_and_a_timed_path() {
    let tools = tools();
    let dir = work("acc-sky130");
    let v = dir.join("acc.v");
    std::fs::write(&v, ACC).unwrap();
    let lib = mcmvm_synth::library::Library::sky130hd(&dir).unwrap_or_else(|e| panic!("{e}"));
    let r = mcmvm_synth::area::synthesize_on(&tools, &lib, &v, "acc", &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    let osu = synthesize(&tools, &v, "acc", &work("acc")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((r.library.as_str(), r.flip_flops), ("sky130hd", 8), "{r:?}");
    assert!(
        r.logic_area_um2 > 0.0 && r.logic_area_um2 < r.area_um2,
        "{r:?}"
    );
    // An 8-bit ripple adder: a few hundred ps to a few ns, never zero.
    assert!(r.min_period_ns > 0.1 && r.min_period_ns < 10.0, "{r:?}");
    assert!((r.max_clock_mhz * r.min_period_ns - 1000.0).abs() < 1e-6);
    // Each node scales with its own factor: 130 nm here, 180 nm for osu018.
    assert!((r.area_mm2_28nm - r.area_um2 * (28.0f64 / 130.0).powi(2) * 1e-6).abs() < 1e-12);
    assert!((osu.area_mm2_28nm - osu.area_um2 * (28.0f64 / 180.0).powi(2) * 1e-6).abs() < 1e-12);
    assert!(
        r.area_um2 < osu.area_um2,
        "sky130 cells are smaller: {r:?} vs {osu:?}"
    );
}

// A register that loads only when enabled: held bits need a hold mux or an enable flop.
const HELD: &str = "module held(input clock, input e, input [7:0] d, output reg [7:0] q);
always @(posedge clock) if (e) q <= d;
endmodule
";

#[test]
fn held_register_maps_to_enable_flops_on_sky130_and_to_muxes_on_osu018() {
    let tools = tools();
    let dir = work("held");
    let v = dir.join("held.v");
    std::fs::write(&v, HELD).unwrap();
    let lib = mcmvm_synth::library::Library::sky130hd(&dir).unwrap_or_else(|e| panic!("{e}"));
    let sky = mcmvm_synth::area::synthesize_on(&tools, &lib, &v, "held", &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    let edff = mcmvm_synth::library::SKY130_HD_ENABLE_FLOP.cell;
    assert_eq!(sky.cell_counts.get(edff), Some(&8), "{sky:?}");
    assert_eq!(sky.flip_flops, 8, "{sky:?}");
    // The enable flop absorbs the hold mux: no logic cell is left (30.03 µm² each).
    assert_eq!(sky.cells, 8, "{sky:?}");
    assert!(sky.logic_area_um2.abs() < 1e-6, "{sky:?}");
    assert!((sky.area_um2 - 8.0 * 30.0288).abs() < 1e-3, "{sky:?}");
    // osu018 has no enable flop: eight plain flops and a hold mux per bit.
    let osu = synthesize(&tools, &v, "held", &dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (osu.flip_flops, osu.cell_counts.get("DFFPOSX1")),
        (8, Some(&8)),
        "{osu:?}"
    );
    assert!(osu.cells >= 16 && osu.logic_area_um2 > 0.0, "{osu:?}");
    // OpenSTA times the enable flops: input to D or DE plus setup, clock to Q.
    assert!(
        sky.min_period_ns > 0.1 && sky.min_period_ns < 2.0,
        "{sky:?}"
    );
}

// No register at all: an unused clock port, as the combinational coalescer has.
const ADD: &str = "module add(input clock, input [7:0] a, input [7:0] b, output [7:0] s);
assign s = a + b;
endmodule
";

#[test]
fn a_design_without_flip_flops_is_timed_input_to_output_on_both_libraries() {
    let tools = tools();
    let dir = work("add");
    let v = dir.join("add.v");
    std::fs::write(&v, ADD).unwrap();
    let sky = mcmvm_synth::library::Library::sky130hd(&dir).unwrap_or_else(|e| panic!("{e}"));
    let osu = mcmvm_synth::library::Library::osu018(&tools);
    for lib in [sky, osu] {
        let r = mcmvm_synth::area::synthesize_on(&tools, &lib, &v, "add", &dir)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((r.flip_flops, r.combinational), (0, true), "{r:?}");
        assert!((r.logic_area_um2 - r.area_um2).abs() < 1e-9, "{r:?}");
        // An 8-bit ripple carry from a[0] to s[7]: some hundred ps, never zero.
        assert!(r.min_period_ns > 0.05 && r.min_period_ns < 10.0, "{r:?}");
    }
}

/// A Liberty file yosys reads but that has one inverter and no flip-flop.
const NO_FLOPS_LIB: &str = "library (no_flops) {\n  cell (INVX1) {\n    area : 1;\n    \
    pin (A) { direction : input; }\n    pin (Y) { direction : output; function : \"!A\"; }\n  }\n}\n";

#[test]
fn an_unusable_liberty_file_is_an_error_naming_it_before_or_from_yosys() {
    let tools = tools();
    let dir = work("no-flops");
    let lib_path = dir.join("no-flops.lib");
    std::fs::write(&lib_path, NO_FLOPS_LIB).unwrap();
    let lib = mcmvm_synth::library::Library {
        liberty: lib_path.clone(),
        ..mcmvm_synth::library::Library::osu018(&tools)
    };
    // Registers and no flip-flop cell: refused before yosys runs, naming the file.
    let acc = dir.join("acc.v");
    std::fs::write(&acc, ACC).unwrap();
    let e = mcmvm_synth::area::synthesize_on(&tools, &lib, &acc, "acc", &dir).unwrap_err();
    assert!(
        matches!(e, mcmvm_synth::SynthError::UnusableLibrary { .. }),
        "{e}"
    );
    let text = e.to_string();
    assert!(text.starts_with(&lib_path.display().to_string()), "{text}");
    assert!(text.contains("no flip-flop cell"), "{text}");
    // No register: yosys runs, cannot map an adder to one inverter, and its failure is
    // the error, with the command's input named.
    let add = dir.join("add.v");
    std::fs::write(&add, ADD).unwrap();
    let e = mcmvm_synth::area::synthesize_on(&tools, &lib, &add, "add", &dir).unwrap_err();
    assert!(
        matches!(e, mcmvm_synth::SynthError::ToolFailed { .. }),
        "{e}"
    );
    assert!(e.to_string().starts_with("yosys failed on "), "{e}");
}
