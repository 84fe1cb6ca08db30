//! Forest on the timing model (`--uvm` on the MCM GPU model, as `mcmvm run --workload ls
//! --policy s64k --uvm forest --oversub 1.5`), at a small scale: `ls`'s streaming objects
//! are classified LS, and a thrashing gather (`hchi`, 150 %) completes.

use std::path::Path;

use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{GpuConfig, RunSpec};
use mcmvm_models::uvm::{run_on_gpu, GpuUvmReport, UvmConfig, UvmPolicy};
use mcmvm_models::workload::by_name;

/// Scale of the built-in workloads (keeps each run well under a minute).
const SCALE: f64 = 0.05;

fn run(name: &str, oversub: f64) -> GpuUvmReport {
    run_on(name, oversub, "mcm-4chiplet.toml", PolicyKind::S64k)
}

/// `name` on the GPU of `gpu_config` under placement `placement`.
fn run_on(name: &str, oversub: f64, gpu_config: &str, placement: PolicyKind) -> GpuUvmReport {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let gpu = GpuConfig::load(&root.join(gpu_config)).expect("the GPU config loads");
    let path = root.join("uvm-turing.toml");
    let text = std::fs::read_to_string(&path).expect("uvm-turing.toml reads");
    let sets = vec![format!("memory.oversubscription={oversub}")];
    let ucfg = UvmConfig::from_text(&text, &path, &sets).expect("uvm-turing.toml parses");
    let wl = by_name(name, SCALE, 1).expect("built-in workload");
    let spec = RunSpec {
        policy: placement,
        scale: SCALE,
        seed: 1,
    };
    run_on_gpu(&gpu, &ucfg, wl.as_ref(), spec, UvmPolicy::Forest, false)
        .unwrap_or_else(|e| panic!("{name} at {oversub}: {e}"))
}

#[test]
#[ignore = "the APD's R² for `ls`'s B sits around the 0.9 threshold on the 4-chiplet timing model (0.4-0.92 across steps: fault replays scramble page-vs-time order), so LS or LC turns on timing details. The paper's rule decides at the first step above the threshold and ceases; it has no margin or vote that would make this stable (docs/results.md, Forest). `ls_is_ls_on_the_papers_gpu_too` covers the paper's GPU"]
fn ls_streaming_objects_are_classified_ls_on_the_timing_model() {
    let r = run("ls", 1.5);
    assert!(r.uvm.far_faults > 0, "150 % oversubscription faults");
    for name in ["A", "B", "C"] {
        let o = r
            .uvm
            .objects
            .iter()
            .find(|o| o.name == name)
            .unwrap_or_else(|| panic!("object {name} reported"));
        assert_eq!(o.class.as_deref(), Some("LS"), "{name}: {:?}", o.source);
    }
}

#[test]
fn a_thrashing_gather_completes_on_the_timing_model() {
    let r = run("hchi", 1.5);
    assert!(r.uvm.far_faults > 0, "faults: {}", r.uvm.far_faults);
    assert!(r.uvm.evictions > 0, "evictions: {}", r.uvm.evictions);
    assert!(r.uvm.cycles > 0 || r.gpu.cycles > 0, "the run finished");
}

#[test]
fn ls_is_ls_on_the_papers_gpu_too() {
    // The Forest sweep's default: one Turing chiplet, 4 KB pages, whole-instruction replays.
    let r = run_on("ls", 1.5, "gpu-turing.toml", PolicyKind::S4k);
    for name in ["A", "B", "C"] {
        let o = r.uvm.objects.iter().find(|o| o.name == name);
        let class = o.and_then(|o| o.class.as_deref());
        assert_eq!(class, Some("LS"), "{name}");
    }
    assert!(r.replays.attempts > 0, "far faults replay");
    assert_eq!(r.protocol.accesses_not_resident, 0);
}
