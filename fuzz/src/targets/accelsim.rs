//! Accel-Sim trace directories (`kernelslist.g`, `kernel-N.traceg[.xz]`), through
//! `TraceWorkload::open` on the directory.

use super::trace::{n, read_back, workload_rejection};
use super::{fixture, unxz, xz, Outcome, Target};
use crate::mutate::mutate;
use crate::Input;
use mcmvm_models::workload::trace::TraceWorkload;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;
use std::path::Path;

pub struct AccelSim;

const OPCODES: &[&str] = &[
    "LDG.E",
    "STG.E",
    "LDG.E.64",
    "STG.E.128",
    "IMAD",
    "LDS.U.128",
    "ATOMG.E.ADD",
    "RED.E.ADD",
    "EXIT",
    "BRA",
    "LD.E",
    "ST.E.64",
];

fn dim(rng: &mut ChaCha8Rng, typical: u64) -> String {
    let mut d = || {
        if rng.gen_bool(0.03) {
            crate::mutate::edge_number(rng)
        } else {
            rng.gen_range(1..=typical).to_string()
        }
    };
    format!("({},{},{})", d(), d(), d())
}

fn addr(rng: &mut ChaCha8Rng) -> u64 {
    let bases = [
        0x7f00_0000_0000u64,
        0x7f00_0020_0000,
        0x7f00_0040_0000,
        0,
        u64::MAX - 4095,
        1 << 47,
    ];
    let base = *bases.choose(rng).expect("bases");
    let bits = rng.gen_range(4..24);
    base.wrapping_add(rng.gen_range(0..1u64 << bits))
}

fn inst_line(rng: &mut ChaCha8Rng, version: u32, lineinfo: bool) -> String {
    let mut l = String::new();
    if version < 3 {
        let _ = write!(l, "0 0 0 {} ", rng.gen_range(0..4));
    }
    if lineinfo {
        let _ = write!(l, "{} ", rng.gen_range(0..200));
    }
    let mask: u32 = match rng.gen_range(0..4) {
        0 => u32::MAX,
        1 => 0,
        _ => rng.gen(),
    };
    let op = OPCODES.choose(rng).expect("opcodes");
    let _ = write!(
        l,
        "{:04x} {mask:08x} 1 R2 {op} 1 R4",
        rng.gen_range(0..4096) * 16
    );
    let width = *[0u64, 1, 4, 8, 16, 128, 129].choose(rng).expect("widths");
    let _ = write!(l, " {width}");
    let lanes = mask.count_ones();
    match rng.gen_range(0..3) {
        0 => {
            let _ = write!(l, " 0");
            for _ in 0..lanes {
                let _ = write!(l, " 0x{:016x}", addr(rng));
            }
        }
        1 => {
            let _ = write!(
                l,
                " 1 0x{:x} {}",
                addr(rng),
                *[0i64, 4, 8, -8, 4096, 1 << 40, i64::MIN]
                    .choose(rng)
                    .expect("strides")
            );
        }
        _ => {
            let _ = write!(l, " 2 0x{:x}", addr(rng));
            for _ in 1..lanes {
                let _ = write!(l, " {}", rng.gen_range(-64i64..4096));
            }
        }
    }
    l
}

fn kernel_text(rng: &mut ChaCha8Rng) -> String {
    let version = *[2u32, 3, 4, 5].choose(rng).expect("versions");
    let lineinfo = rng.gen_bool(0.2);
    let mut t = String::new();
    let _ = writeln!(t, "-kernel name = k{}", rng.gen_range(0..9));
    let _ = writeln!(t, "-kernel id = 1");
    let grid = if rng.gen_bool(0.05) {
        ["(65536,65536,1)", "(65535,65537,1)", "(4294967295,1,1)"]
            .choose(rng)
            .expect("grids")
            .to_string()
    } else {
        dim(rng, 3)
    };
    let _ = writeln!(t, "-grid dim = {grid}");
    let _ = writeln!(
        t,
        "-block dim = ({},1,1)",
        [32, 64, 96, 1024, 1025].choose(rng).expect("blocks")
    );
    let _ = writeln!(t, "-shmem = 0\n-nregs = 16\n-cuda stream id = 0");
    let _ = writeln!(t, "-accelsim tracer version = {version}");
    if lineinfo {
        let _ = writeln!(t, "-enable lineinfo = 1");
    }
    t.push_str("\n#traces format = ...\n\n");
    for b in 0..rng.gen_range(0..4) {
        let _ = writeln!(t, "#BEGIN_TB\n\nthread block = {b},0,0\n");
        for w in 0..rng.gen_range(0..4) {
            let insts = rng.gen_range(0..6);
            let _ = writeln!(
                t,
                "warp = {w}\ninsts = {}",
                if rng.gen_bool(0.02) {
                    n(rng, 1)
                } else {
                    insts.to_string()
                }
            );
            for _ in 0..insts {
                t.push_str(&inst_line(rng, version, lineinfo));
                t.push('\n');
            }
            t.push('\n');
        }
        t.push_str("#END_TB\n\n");
    }
    t
}

impl Target for AccelSim {
    fn name(&self) -> &'static str {
        "accelsim"
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Input {
        // 1. The list and the kernel texts: the shipped fixture, or generated.
        let (list, kernels) = if rng.gen_bool(0.3) {
            fixture_directory()
        } else {
            generated_directory(rng)
        };
        // 2. Mutated and compressed into the input's files.
        into_input(rng, list, kernels)
    }

    fn run(&self, dir: &Path) -> Outcome {
        match TraceWorkload::open(dir) {
            Ok(w) => read_back(&w),
            Err(e) => {
                // The message names the file at fault: the list or one kernel file.
                let at = match &e {
                    mcmvm_models::workload::WorkloadError::Trace { path, .. }
                    | mcmvm_models::workload::WorkloadError::TraceFile { path, .. }
                    | mcmvm_models::workload::WorkloadError::Decompress { path, .. }
                    | mcmvm_models::workload::WorkloadError::Io { path, .. } => path.clone(),
                    _ => dir.to_path_buf(),
                };
                if !at.starts_with(dir) {
                    return Err((
                        crate::runner::FailureKind::Message,
                        format!("the error names `{}`, outside the trace: {e}", at.display()),
                    ));
                }
                workload_rejection(&e, &at)
            }
        }
    }
}

/// A kernel file's name and its (uncompressed) text.
type KernelFile = (String, Vec<u8>);

/// The shipped `configs/traces/accelsim-tiny` directory: its list and kernel texts.
fn fixture_directory() -> (String, Vec<KernelFile>) {
    let list = String::from_utf8_lossy(&fixture("configs/traces/accelsim-tiny/kernelslist.g"))
        .into_owned();
    let kernels = vec![
        (
            "kernel-1.traceg".into(),
            fixture("configs/traces/accelsim-tiny/kernel-1.traceg"),
        ),
        (
            "kernel-2.traceg.xz".into(),
            unxz(&fixture("configs/traces/accelsim-tiny/kernel-2.traceg.xz")),
        ),
    ];
    (list, kernels)
}

/// A generated list (memory commands before each kernel, sometimes a kernel listed twice)
/// and its kernel texts.
fn generated_directory(rng: &mut ChaCha8Rng) -> (String, Vec<KernelFile>) {
    let mut list = String::new();
    let mut kernels = Vec::new();
    for k in 1..=rng.gen_range(1..4) {
        for _ in 0..rng.gen_range(0..3) {
            let what = [
                "cudaMalloc",
                "MemcpyHtoD",
                "cudaMallocManaged",
                "MemcpyDtoH",
            ]
            .choose(rng)
            .expect("commands");
            let _ = write!(
                list,
                "{what},0x{:x},{}",
                addr(rng) & !0xfff,
                n(rng, 1 << 21)
            );
            if rng.gen_bool(0.3) {
                let _ = write!(list, ",B{}", rng.gen_range(0..3));
            }
            list.push('\n');
        }
        let name = if rng.gen_bool(0.3) {
            format!("kernel-{k}.traceg.xz")
        } else {
            format!("kernel-{k}.traceg")
        };
        let _ = writeln!(list, "{name}");
        if rng.gen_bool(0.1) {
            let _ = writeln!(list, "{name}");
        }
        kernels.push((name, kernel_text(rng).into_bytes()));
    }
    (list, kernels)
}

/// The input's files: the list and each kernel text, sometimes mutated; `.xz` kernels
/// compressed, sometimes with a corrupt or cut stream.
fn into_input(rng: &mut ChaCha8Rng, list: String, kernels: Vec<KernelFile>) -> Input {
    let mut input = Input::default();
    let list = if rng.gen_bool(0.4) {
        mutate(list.as_bytes(), rng, 3)
    } else {
        list.into_bytes()
    };
    input.logical_bytes += list.len() as u64;
    input.files.push(("kernelslist.g".into(), list));
    for (name, text) in kernels {
        let text = if rng.gen_bool(0.7) {
            mutate(&text, rng, 4)
        } else {
            text
        };
        input.logical_bytes += text.len() as u64;
        let bytes = if name.ends_with(".xz") {
            let mut z = xz(&text);
            // A corrupt or cut compressed stream.
            if rng.gen_bool(0.1) {
                z = mutate(&z, rng, 1);
            }
            z
        } else {
            text
        };
        input.files.push((name, bytes));
    }
    input
}
