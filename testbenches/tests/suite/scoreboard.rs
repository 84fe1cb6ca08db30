//! The scoreboard is live: a twin that is wrong in one bit of one output on one cycle is
//! caught on exactly that cycle, naming exactly that signal, while the real engines agree;
//! and the VCD of the run parses back with every port of every engine.

use mcmvm_cosim::{run_lockstep, Att, BoxedEngine, Coalescer, CosimBlock, EngineKind, Rt};
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{CycleModel, Ports};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Wraps a correct engine and flips bit `bit` of output port `port` on cycle `at` only.
struct WrongTwin<I, O> {
    inner: BoxedEngine<I, O>,
    at: u64,
    port: usize,
    bit: u32,
    cycle: u64,
}

impl<I: Ports, O: Ports> CycleModel for WrongTwin<I, O> {
    type In = I;
    type Out = O;
    fn step(&mut self, input: &I) -> O {
        let mut out = self.inner.step(input);
        if self.cycle == self.at {
            let v = out.get(self.port) ^ (1u64 << self.bit);
            out.set(self.port, v);
        }
        self.cycle += 1;
        out
    }
}

const SEED: u64 = 20251130;

/// For every output port of block `B`: twin, rusthdl, verilator and a wrong copy of the
/// twin that flips that port on cycle `k`; the run must stop at `k` naming the port.
/// The engines of one lockstep run, by name.
type NamedEngines<B> = Vec<(
    String,
    BoxedEngine<<B as CosimBlock>::In, <B as CosimBlock>::Out>,
)>;

/// Builds a fresh stimulus stream for one run.
type StimulusFactory<'a, I> = dyn Fn() -> Box<dyn Iterator<Item = I>> + 'a;

fn wrong_twin_is_caught<B: CosimBlock>(stimulus: &StimulusFactory<'_, B::In>) {
    let cfg = HwConfig::default();
    println!("block {:?}, seed {SEED}", B::KIND);
    for (port, desc) in B::Out::PORTS.iter().enumerate() {
        let k = 40 + 7 * port as u64;
        let mut engines: NamedEngines<B> = Vec::new();
        for kind in EngineKind::ALL {
            let engine = B::engine(kind, &cfg)
                .unwrap_or_else(|e| panic!("engine {kind} of {:?}: {e}", B::KIND));
            engines.push((kind.name().to_string(), engine));
        }
        let wrong = WrongTwin {
            inner: B::engine(EngineKind::Twin, &cfg).expect("the twin always builds"),
            at: k,
            port,
            bit: desc.width - 1,
            cycle: 0,
        };
        engines.push(("wrong".to_string(), Box::new(wrong)));
        let vcd = (port == 0).then(|| wave_path(B::KIND.module_name()));
        let report =
            run_lockstep(engines, 10_000, vcd.as_deref(), stimulus()).expect("lockstep runs");
        let m = report
            .mismatch
            .unwrap_or_else(|| panic!("flipping {} at cycle {k} went unnoticed", desc.name));
        assert_eq!(m.cycle, k, "caught on the wrong cycle");
        assert_eq!(m.signal, desc.name, "named the wrong signal");
        assert_eq!(report.cycles, k + 1, "the run must stop at the mismatch");
        let values: HashMap<&str, u64> = m.values.iter().map(|(e, v)| (e.as_str(), *v)).collect();
        assert_eq!(values.len(), 4);
        assert_eq!(values["twin"], values["rusthdl"]);
        assert_eq!(values["twin"], values["verilator"]);
        assert_eq!(values["wrong"], values["twin"] ^ (1u64 << (desc.width - 1)));
        if let Some(path) = vcd {
            check_wave::<B>(&path, k, desc.name);
        }
    }
}

fn wave_path(module: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../out/waves")
        .join(format!("scoreboard_{module}.vcd"))
}

/// The VCD holds every input in `inputs` and every output in each engine's scope, ends at
/// the mismatching cycle, and the flipped signal's last values differ between the twin and
/// the wrong copy.
fn check_wave<B: CosimBlock>(path: &Path, k: u64, flipped: &str) {
    let file = std::fs::File::open(path).expect("the VCD was written");
    let mut parser = vcd::Parser::new(std::io::BufReader::new(file));
    let header = parser.parse_header().expect("the VCD header parses");
    let mut ids = HashMap::new();
    let mut scope_ports = |scope: &str, ports: &[mcmvm_models::protocol::PortDesc]| {
        for p in ports {
            let var = header
                .find_var(&[scope, p.name])
                .unwrap_or_else(|| panic!("{}: no {scope}.{}", path.display(), p.name));
            assert_eq!(var.size, p.width, "{scope}.{}", p.name);
            ids.insert(var.code, (scope.to_string(), p.name));
        }
    };
    scope_ports("inputs", B::In::PORTS);
    for engine in ["twin", "rusthdl", "verilator", "wrong"] {
        scope_ports(engine, B::Out::PORTS);
    }
    let mut last_time = 0;
    let mut last: HashMap<(String, &str), String> = HashMap::new();
    for command in parser {
        match command.expect("the VCD body parses") {
            vcd::Command::Timestamp(t) => last_time = t,
            vcd::Command::ChangeScalar(id, v) => {
                last.insert(ids[&id].clone(), format!("{v:?}"));
            }
            vcd::Command::ChangeVector(id, v) => {
                last.insert(ids[&id].clone(), format!("{v:?}"));
            }
            _ => {}
        }
    }
    assert_eq!(
        last_time,
        k + 1,
        "the wave ends right after the mismatching cycle"
    );
    assert_ne!(
        last[&("twin".to_string(), flipped)],
        last[&("wrong".to_string(), flipped)],
        "the wave shows the flipped value"
    );
}

#[test]
fn wrong_coalescer_twin_is_caught_at_its_cycle_and_signal() {
    let cfg = HwConfig::default();
    wrong_twin_is_caught::<Coalescer>(&|| {
        Box::new(mcmvm_testbenches::tlb_coalescer::random(&cfg, SEED))
    });
}

#[test]
fn wrong_rt_twin_is_caught_at_its_cycle_and_signal() {
    let cfg = HwConfig::default();
    wrong_twin_is_caught::<Rt>(&|| Box::new(mcmvm_testbenches::remote_tracker::random(&cfg, SEED)));
}

#[test]
fn wrong_att_twin_is_caught_at_its_cycle_and_signal() {
    let cfg = HwConfig::default();
    wrong_twin_is_caught::<Att>(&|| {
        Box::new(mcmvm_testbenches::access_time_tracker::random(&cfg, SEED))
    });
}
