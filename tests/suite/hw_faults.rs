//! Hardware in the loop, wrong engines: a broken twin is caught inside a system run at the
//! exact system cycle and signal (`--hw check`, on either thread), a rule broken in both
//! engines alike by the README reference, and a wrong predictor of `--hw verilator` repeats
//! the run with the RTL serving.

use crate::hw_support;

use hw_support::{clap_report, clap_run, gpu_cfg, mode, simulated, SEED};
use mcmvm_cosim::system::{CheckEngine, HwMode, HwOptions};
use mcmvm_models::blocks::{remote_tracker::RemoteTracker, Hardware};
use mcmvm_models::config::{AttConfig, CoalescerConfig, RtConfig};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::GpuError;
use mcmvm_models::protocol::{AttIn, AttOut, BlockKind, CoalIn, CoalOut, CycleModel, RtIn, RtOut};
use mcmvm_protocol::system::{BlockFactory, BlockFault, BoxedSystemEngine, Plain};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The block parameters of one RT instance (the other blocks at their defaults).
fn rt_hw(cfg: &RtConfig) -> mcmvm_models::config::HwConfig {
    mcmvm_models::config::HwConfig {
        remote_tracker: cfg.clone(),
        ..Default::default()
    }
}

/// The RT's emitted Verilog for `hw` under Verilator.
fn rt_verilog(
    hw: &mcmvm_models::config::HwConfig,
) -> mcmvm_cosim::verilator::VerilatorModel<RtIn, RtOut> {
    mcmvm_cosim::verilator::VerilatorModel::new(BlockKind::RemoteTracker, hw)
        .expect("the RT's Verilator model builds")
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
        clap_report(&cfg, "bfs", PolicyKind::Clap, scale)
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
                let hw = rt_hw(cfg);
                let rtl = rt_verilog(&hw);
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
                &rt_hw(c),
                &opts,
            )) as BoxedSystemEngine<RtIn, RtOut>
        },
        "check",
    )));
    match clap_report(&cfg, "bfs", PolicyKind::Clap, scale) {
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
        let hw = rt_hw(cfg);
        let rtl = rt_verilog(&hw);
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
    let r = clap_report(&cfg, "bfs", PolicyKind::Clap, scale).expect("the repeated run completes");
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
    let r = clap_report(&cfg, "bfs", PolicyKind::Clap, scale).expect("verilator run");
    assert_eq!(r.hardware.repeated_after, None);
    assert!(r
        .hardware
        .blocks
        .iter()
        .all(|b| b.engine.compared == b.block_cycles));
}

/// Serves every coalescer with the twin of the *other* `output_registers` variant than the
/// run asks for (RT and ATT: the twins).
struct OtherCoalescerVariant;

impl BlockFactory for OtherCoalescerVariant {
    fn name(&self) -> &str {
        "other-variant"
    }
    fn remote_tracker(
        &self,
        cfg: &RtConfig,
        _: &str,
    ) -> Result<BoxedSystemEngine<RtIn, RtOut>, BlockFault> {
        Ok(Box::new(Plain::new(RemoteTracker::new(cfg), "twin")))
    }
    fn tlb_coalescer(
        &self,
        cfg: &CoalescerConfig,
        _: &str,
    ) -> Result<BoxedSystemEngine<CoalIn, CoalOut>, BlockFault> {
        let other = CoalescerConfig {
            output_registers: !cfg.output_registers,
            ..cfg.clone()
        };
        Ok(Box::new(Plain::new(
            mcmvm_models::blocks::tlb_coalescer::TlbCoalescer::new(&other),
            "other variant",
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
fn a_coalescer_answering_off_its_documented_latency_is_an_error() {
    // The combinational unit must answer in the request's cycle (latency 0), the
    // registered one exactly one cycle later: an engine of the other variant misses it.
    let scale = 0.02;
    for output_registers in [false, true] {
        let mut cfg = gpu_cfg("mcm-4chiplet.toml");
        cfg.hw.tlb_coalescer.output_registers = output_registers;
        cfg.engines = Hardware(Arc::new(OtherCoalescerVariant));
        let err = clap_report(&cfg, "bfs", PolicyKind::Clap, scale)
            .expect_err("the wrong variant is caught");
        match err {
            GpuError::Block(BlockFault::NoAnswer {
                block,
                port,
                latency,
                ..
            }) => {
                assert_eq!(block, "tlb_coalescer");
                assert_eq!(port, "merge_done", "the first request is a walk's merge");
                assert_eq!(latency, u32::from(output_registers));
            }
            other => panic!("output_registers = {output_registers}: {other}"),
        }
    }
}
