//! Hardware in the loop: the emitted Verilog (and rust-hdl's simulator) serve inside
//! full-system runs and give the twins' answers exactly; `--hw check` compares every output
//! every cycle and catches a wrong engine at the exact system cycle and signal.
//!
//! Small scales (printed per test) keep this in the test budget; the models are built once
//! per parameter set and cached (first use prints a line on stderr).

use mcmvm_cosim::system::{hardware, CheckEngine, HwMode, HwOptions};
use mcmvm_models::blocks::{remote_tracker::RemoteTracker, Hardware};
use mcmvm_models::config::{AttConfig, CoalescerConfig, RtConfig};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, GpuError, RunSpec};
use mcmvm_models::protocol::{AttIn, AttOut, BlockKind, CoalIn, CoalOut, CycleModel, RtIn, RtOut};
use mcmvm_models::uvm::{self, UvmConfig, UvmPolicy};
use mcmvm_models::workload;
use mcmvm_protocol::system::{BlockFactory, BlockFault, BoxedSystemEngine, Plain};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const SEED: u64 = 1;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn gpu_cfg(name: &str) -> GpuConfig {
    GpuConfig::load(&root().join("configs").join(name)).expect("built-in GPU config loads")
}

fn uvm_cfg() -> UvmConfig {
    UvmConfig::load(&root().join("configs/uvm-turing.toml"), &[]).expect("UVM config loads")
}

fn mode(m: HwMode) -> Hardware {
    let mut o = HwOptions::new(m);
    o.mismatch_dir = std::env::temp_dir().join("mcmvm-hw-check");
    hardware(o)
}

/// A report as JSON without what may differ between engines: host timing and engine names.
fn simulated(v: &impl serde::Serialize) -> serde_json::Value {
    mcmvm_models::figures::simulated_figures(v)
}

fn clap_run(
    cfg: &GpuConfig,
    w: &str,
    policy: PolicyKind,
    scale: f64,
) -> Result<serde_json::Value, GpuError> {
    let wl = workload::by_name(w, scale, SEED).expect("built-in workload");
    let spec = RunSpec {
        policy,
        scale,
        seed: SEED,
    };
    simulate(cfg, wl.as_ref(), spec).map(|r| {
        assert!(r
            .hardware
            .blocks
            .iter()
            .all(|b| b.block_cycles > 0 || b.block == "tlb_coalescer"));
        simulated(&r)
    })
}

#[test]
fn verilator_gives_the_twins_answers_on_every_clap_workload() {
    let scale = 0.03;
    println!("scale {scale}, seed {SEED}");
    let twin = gpu_cfg("mcm-4chiplet.toml");
    let mut rtl = twin.clone();
    rtl.engines = mode(HwMode::Verilator);
    for &w in workload::clap_suite() {
        let a = clap_run(&twin, w, PolicyKind::Clap, scale).expect("twin run");
        let b = clap_run(&rtl, w, PolicyKind::Clap, scale).expect("verilator run");
        assert_eq!(
            a, b,
            "{w} under clap: --hw verilator differs from --hw twin"
        );
    }
}

#[test]
fn verilator_gives_the_twins_answers_on_every_forest_workload() {
    let scale = 0.05;
    println!("scale {scale}, seed {SEED}");
    let twin = uvm_cfg();
    let mut rtl = twin.clone();
    rtl.engines = hardware(HwOptions::new(HwMode::Verilator));
    for &w in workload::forest_suite() {
        for policy in [UvmPolicy::Forest, UvmPolicy::SpecForest] {
            let wl = workload::by_name(w, scale, SEED).expect("built-in workload");
            let a = uvm::run_workload(wl.as_ref(), &twin, policy, false).expect("twin run");
            let b = uvm::run_workload(wl.as_ref(), &rtl, policy, false).expect("verilator run");
            assert!(
                b.hardware.blocks[0].block_cycles > 0,
                "{w}: the ATT was clocked"
            );
            assert_eq!(simulated(&a), simulated(&b), "{w} under {}", policy.name());
        }
    }
}

#[test]
fn rusthdl_and_check_serve_a_small_clap_run_and_an_8_chiplet_one() {
    let scale = 0.02;
    println!("scale {scale}, seed {SEED}");
    for cfg_name in ["mcm-4chiplet.toml", "mcm-8chiplet.toml"] {
        let twin = gpu_cfg(cfg_name);
        let want = clap_run(&twin, "bfs", PolicyKind::Clap, scale).expect("twin run");
        for m in [HwMode::RustHdl, HwMode::Check] {
            let mut cfg = twin.clone();
            cfg.engines = mode(m);
            let got = clap_run(&cfg, "bfs", PolicyKind::Clap, scale).expect("RTL run");
            assert_eq!(want, got, "{cfg_name}, --hw {}", m.name());
        }
        // The Verilog serving on the system's thread, no twin predicting it.
        let mut o = HwOptions::new(HwMode::Verilator);
        o.predict = false;
        let mut cfg = twin.clone();
        cfg.engines = hardware(o);
        let got = clap_run(&cfg, "bfs", PolicyKind::Clap, scale).expect("unpredicted run");
        assert_eq!(want, got, "{cfg_name}, --hw verilator --hw-unpredicted");
    }
}

#[test]
fn check_runs_non_default_block_parameters_on_the_emitted_verilog() {
    let scale = 0.03;
    let mut cfg = gpu_cfg("mcm-4chiplet.toml");
    cfg.hw.remote_tracker = RtConfig {
        counter_bits: 8,
        report_evictions: true,
        entries: 8,
        ..cfg.hw.remote_tracker.clone()
    };
    let twin = clap_run(&cfg, "bfs", PolicyKind::Clap, scale).expect("twin run");
    cfg.engines = mode(HwMode::Check);
    let wl = workload::by_name("bfs", scale, SEED).expect("bfs");
    let spec = RunSpec {
        policy: PolicyKind::Clap,
        scale,
        seed: SEED,
    };
    let r = simulate(&cfg, wl.as_ref(), spec).expect("check run");
    assert!(r.hardware.compared() > 0);
    assert_eq!(twin, simulated(&r));
    // The checker thread has compared every block cycle by the end of the run.
    for b in &r.hardware.blocks {
        assert_eq!(
            b.engine.compared, b.block_cycles,
            "{} on {}",
            b.block, b.unit
        );
    }

    let mut ucfg = uvm_cfg();
    ucfg.att = AttConfig {
        objects: 16,
        ..ucfg.att.clone()
    };
    ucfg.engines = hardware(HwOptions::new(HwMode::Check));
    let wl = workload::by_name("ls", 0.05, SEED).expect("ls");
    let m = uvm::run_workload(wl.as_ref(), &ucfg, UvmPolicy::Forest, false).expect("ATT check");
    assert!(m.hardware.compared() > 0);
    let att = &m.hardware.blocks[0];
    assert_eq!(
        att.engine.compared, att.block_cycles,
        "every ATT cycle compared"
    );
}

/// The Verilator models' own registers keep the blocks' invariants under system traffic:
/// bfs under clap on 4 chiplets (RT and coalescer) and ls under Forest (the ATT, where the
/// driver's objects must also occupy disjoint ranges).
#[test]
fn system_traffic_keeps_the_blocks_state_invariants() {
    let mut o = HwOptions::new(HwMode::Check);
    o.invariants = true;
    o.mismatch_dir = std::env::temp_dir().join("mcmvm-hw-check");
    let mut cfg = gpu_cfg("mcm-4chiplet.toml");
    cfg.engines = hardware(o.clone());
    let scale = 0.05;
    println!("bfs / clap at scale {scale}, seed {SEED}");
    clap_run(&cfg, "bfs", PolicyKind::Clap, scale).unwrap_or_else(|e| panic!("{e}"));
    let mut ucfg = uvm_cfg();
    ucfg.engines = hardware(o);
    let wl = workload::by_name("ls", 0.05, SEED).expect("ls");
    let m = uvm::run_workload(wl.as_ref(), &ucfg, UvmPolicy::Forest, false)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(m.hardware.compared() > 0);
}

#[test]
fn skipped_idle_cycles_change_no_output_when_stepped() {
    let scale = 0.02;
    let mut cfg = gpu_cfg("mcm-4chiplet.toml");
    let want = clap_run(&cfg, "ste", PolicyKind::Clap, scale).expect("twin run");
    let mut o = HwOptions::new(HwMode::Check);
    o.every_cycle = true;
    cfg.engines = hardware(o);
    let got = clap_run(&cfg, "ste", PolicyKind::Clap, scale).expect("every cycle stepped");
    assert_eq!(want, got);
}

/// The RT twin with one update rule broken: a drain that hits reports one access too many.
struct OffByOne(RemoteTracker);

impl CycleModel for OffByOne {
    type In = RtIn;
    type Out = RtOut;
    fn step(&mut self, input: &RtIn) -> RtOut {
        let mut o = self.0.step(input);
        if o.drain_hit == 1 {
            o.drain_access += 1;
        }
        o
    }
}

/// Records the system cycle of the first drain hit the plain twin answers.
struct FirstHit {
    twin: RemoteTracker,
    seen: Arc<Mutex<Option<(u64, String)>>>,
    unit: String,
}

impl mcmvm_protocol::system::SystemEngine<RtIn, RtOut> for FirstHit {
    fn step(&mut self, system_cycle: u64, input: &RtIn) -> Result<RtOut, BlockFault> {
        let o = self.twin.step(input);
        let mut seen = self.seen.lock().expect("no poisoned lock");
        if o.drain_hit == 1 && seen.is_none() {
            *seen = Some((system_cycle, self.unit.clone()));
        }
        Ok(o)
    }
    fn report(&self) -> mcmvm_protocol::system::EngineReport {
        Default::default()
    }
}

/// The RT built by `make`; the coalescer and ATT are the twins.
struct RtOnly<F>(F, &'static str);

impl<F> BlockFactory for RtOnly<F>
where
    F: Fn(&RtConfig, &str) -> BoxedSystemEngine<RtIn, RtOut> + Send + Sync,
{
    fn name(&self) -> &str {
        self.1
    }
    fn remote_tracker(
        &self,
        cfg: &RtConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<RtIn, RtOut>, BlockFault> {
        Ok((self.0)(cfg, unit))
    }
    fn tlb_coalescer(
        &self,
        cfg: &CoalescerConfig,
        _: &str,
    ) -> Result<BoxedSystemEngine<CoalIn, CoalOut>, BlockFault> {
        Ok(Box::new(Plain::new(
            mcmvm_models::blocks::tlb_coalescer::TlbCoalescer::new(cfg),
            "twin",
        )))
    }
    fn access_time_tracker(
        &self,
        cfg: &AttConfig,
        _: &str,
    ) -> Result<BoxedSystemEngine<AttIn, AttOut>, BlockFault> {
        Ok(Box::new(Plain::new(
            mcmvm_models::blocks::access_time_tracker::AccessTimeTracker::new(cfg),
            "twin",
        )))
    }
}

#[test]
fn a_wrong_twin_is_caught_at_the_exact_system_cycle_and_signal() {
    let scale = 0.03;
    let base = gpu_cfg("mcm-4chiplet.toml");
    let run = |hw: Hardware| {
        let mut cfg = base.clone();
        cfg.engines = hw;
        let wl = workload::by_name("bfs", scale, SEED).expect("bfs");
        let spec = RunSpec {
            policy: PolicyKind::Clap,
            scale,
            seed: SEED,
        };
        simulate(&cfg, wl.as_ref(), spec)
    };
    // Where the first drain hit happens, seen by a plain twin.
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    run(Hardware(Arc::new(RtOnly(
        move |cfg: &RtConfig, unit: &str| {
            Box::new(FirstHit {
                twin: RemoteTracker::new(cfg),
                seen: s.clone(),
                unit: unit.to_string(),
            }) as BoxedSystemEngine<RtIn, RtOut>
        },
        "probe",
    ))))
    .expect("probe run");
    let (cycle, unit) = seen
        .lock()
        .expect("lock")
        .clone()
        .expect("bfs under clap drains a hit");
    // The same run with the broken twin checked against the Verilog, compared on a
    // thread of its own (the default) and on the system's thread: the same fault.
    for check_thread in [true, false] {
        let dir: PathBuf = std::env::temp_dir().join(format!(
            "mcmvm-wrong-twin-{}-{check_thread}",
            std::process::id()
        ));
        let mut opts = HwOptions::new(HwMode::Check);
        opts.mismatch_dir = dir.clone();
        opts.check_thread = check_thread;
        let err = run(Hardware(Arc::new(RtOnly(
            move |cfg: &RtConfig, unit: &str| {
                let hw = mcmvm_models::config::HwConfig {
                    remote_tracker: cfg.clone(),
                    ..Default::default()
                };
                let rtl = mcmvm_cosim::verilator::VerilatorModel::<RtIn, RtOut>::new(
                    BlockKind::RemoteTracker,
                    &hw,
                )
                .expect("the RT's Verilator model builds");
                Box::new(CheckEngine::new(
                    BlockKind::RemoteTracker,
                    unit,
                    ("twin", Box::new(OffByOne(RemoteTracker::new(cfg)))),
                    ("verilator", Box::new(rtl)),
                    &hw,
                    &opts,
                )) as BoxedSystemEngine<RtIn, RtOut>
            },
            "check",
        ))))
        .expect_err("the broken twin is caught");
        match err {
            GpuError::Block(BlockFault::Mismatch {
                system_cycle,
                signal,
                unit: u,
                values,
                vcd,
                ..
            }) => {
                assert_eq!(
                    (system_cycle, u.as_str(), signal),
                    (cycle, unit.as_str(), "drain_access")
                );
                assert_eq!(values[0].1, values[1].1 + 1, "{values:?}");
                let vcd = vcd.expect("the mismatch VCD is written");
                let text = std::fs::read_to_string(&vcd).expect("VCD readable");
                assert!(text.contains("$scope module inputs"), "{text:.200}");
            }
            e => panic!("expected a mismatch, got {e}"),
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_rule_broken_in_both_engines_alike_is_caught_by_the_readme_reference() {
    let scale = 0.03;
    let mut cfg = gpu_cfg("mcm-4chiplet.toml");
    let opts = HwOptions::new(HwMode::Check);
    cfg.engines = Hardware(Arc::new(RtOnly(
        move |c: &RtConfig, unit: &str| {
            Box::new(CheckEngine::new(
                BlockKind::RemoteTracker,
                unit,
                ("twin", Box::new(OffByOne(RemoteTracker::new(c)))),
                ("mutant", Box::new(OffByOne(RemoteTracker::new(c)))),
                &mcmvm_models::config::HwConfig {
                    remote_tracker: c.clone(),
                    ..Default::default()
                },
                &opts,
            )) as BoxedSystemEngine<RtIn, RtOut>
        },
        "check",
    )));
    let wl = workload::by_name("bfs", scale, SEED).expect("bfs");
    let spec = RunSpec {
        policy: PolicyKind::Clap,
        scale,
        seed: SEED,
    };
    match simulate(&cfg, wl.as_ref(), spec) {
        Err(GpuError::Block(BlockFault::Reference { message, .. })) => {
            assert!(message.contains("drain_access"), "{message}");
        }
        Err(e) => panic!("expected a reference violation, got {e}"),
        Ok(_) => panic!("two engines broken alike were not caught"),
    }
}

/// `--hw verilator`'s RT, with the broken twin as its predictor; unpredicted, the plain
/// Verilog. The coalescer and the ATT are the twins.
struct WrongPredictor {
    predict: bool,
}

impl BlockFactory for WrongPredictor {
    fn name(&self) -> &str {
        "verilator"
    }
    fn unpredicted(&self) -> Option<Arc<dyn BlockFactory>> {
        self.predict
            .then(|| Arc::new(WrongPredictor { predict: false }) as Arc<dyn BlockFactory>)
    }
    fn remote_tracker(
        &self,
        cfg: &RtConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<RtIn, RtOut>, BlockFault> {
        let hw = mcmvm_models::config::HwConfig {
            remote_tracker: cfg.clone(),
            ..Default::default()
        };
        let rtl = mcmvm_cosim::verilator::VerilatorModel::<RtIn, RtOut>::new(
            BlockKind::RemoteTracker,
            &hw,
        )
        .expect("the RT's Verilator model builds");
        Ok(if self.predict {
            Box::new(CheckEngine::predicted(
                BlockKind::RemoteTracker,
                unit,
                Box::new(OffByOne(RemoteTracker::new(cfg))),
                ("verilator", Box::new(rtl)),
                &hw,
                &HwOptions::new(HwMode::Verilator),
            ))
        } else {
            Box::new(Plain::new(rtl, "verilator"))
        })
    }
    fn tlb_coalescer(
        &self,
        cfg: &CoalescerConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<CoalIn, CoalOut>, BlockFault> {
        RtOnly(|_: &RtConfig, _: &str| unreachable!(), "twins").tlb_coalescer(cfg, unit)
    }
    fn access_time_tracker(
        &self,
        cfg: &AttConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<AttIn, AttOut>, BlockFault> {
        RtOnly(|_: &RtConfig, _: &str| unreachable!(), "twins").access_time_tracker(cfg, unit)
    }
}

/// `--hw verilator` runs the RTL on a thread of its own with the twin predicting its
/// outputs; when the twin is wrong, the run is repeated with the RTL serving unpredicted,
/// so the results are the RTL's (here: the correct twin's), and the report says why.
#[test]
fn a_mispredicting_twin_repeats_the_run_with_the_rtl_serving() {
    let scale = 0.03;
    println!("bfs / clap at scale {scale}, seed {SEED}");
    let twin = gpu_cfg("mcm-4chiplet.toml");
    let want = clap_run(&twin, "bfs", PolicyKind::Clap, scale).expect("twin run");
    let mut cfg = twin.clone();
    cfg.engines = Hardware(Arc::new(WrongPredictor { predict: true }));
    let wl = workload::by_name("bfs", scale, SEED).expect("bfs");
    let spec = RunSpec {
        policy: PolicyKind::Clap,
        scale,
        seed: SEED,
    };
    let r = simulate(&cfg, wl.as_ref(), spec).expect("the repeated run completes");
    let why = r
        .hardware
        .repeated_after
        .clone()
        .expect("the run was repeated");
    assert!(why.contains("mispredicted `drain_access`"), "{why}");
    assert!(r
        .hardware
        .table()
        .contains("repeated with the RTL serving unpredicted"));
    assert_eq!(want, simulated(&r), "the repeat gives the RTL's results");
    // A correct predictor is never repeated.
    let mut cfg = twin.clone();
    cfg.engines = mode(HwMode::Verilator);
    let r = simulate(&cfg, wl.as_ref(), spec).expect("verilator run");
    assert_eq!(r.hardware.repeated_after, None);
    assert!(r
        .hardware
        .blocks
        .iter()
        .all(|b| b.engine.compared == b.block_cycles));
}
