//! NVBit `mem_trace` output, through `TraceWorkload::open` (which detects the format).

use super::trace::{n, open_trace_file, text_trace_input};
use super::{Outcome, Target};
use crate::Input;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;
use std::path::Path;

pub struct Nvbit;

const FILE: &str = "input.txt";
const OPCODES: &[&str] = &[
    "LDG.E",
    "STG.E",
    "LDG.E.64",
    "STG.E.128",
    "LDS",
    "STL",
    "ATOMG.E.ADD",
    "LD.E.U8",
    "RED.E.ADD.STRONG.GPU",
];

fn generate_text(rng: &mut ChaCha8Rng) -> String {
    let mut t = String::from(
        "------------- NVBit (NVidia Binary Instrumentation Tool v1.7.4) Loaded --------------\n",
    );
    let ctx = "0x000055d1c3a0e000";
    for launch in 0..rng.gen_range(1..4) {
        if rng.gen_bool(0.9) {
            let grid = if rng.gen_bool(0.05) {
                ["4294967295,65535,65535", "4294967295,1,1", "65535,65537,1"]
                    .choose(rng)
                    .expect("grids")
                    .to_string()
            } else {
                format!("{},{},1", rng.gen_range(1..4), rng.gen_range(1..3))
            };
            let block = if rng.gen_bool(0.05) {
                "4294967296,4294967296,1024".to_string()
            } else {
                format!("{},1,1", [32, 64, 128, 1024].choose(rng).expect("blocks"))
            };
            let _ = writeln!(t, "MEMTRACE: CTX {ctx} - LAUNCH - Kernel pc 0x00007f1a2c000000 - Kernel name k{launch}(double*, int) - grid launch id {launch} - grid size {grid} - block size {block} - nregs 16 - shmem 0 - cuda stream id 0");
        }
        for _ in 0..rng.gen_range(0..10) {
            let (x, y) = (rng.gen_range(0..4), rng.gen_range(0..2));
            let warp = if rng.gen_bool(0.1) {
                n(rng, 64)
            } else {
                rng.gen_range(0..4).to_string()
            };
            let op = OPCODES.choose(rng).expect("opcodes");
            let _ = write!(t, "MEMTRACE: CTX {ctx} - grid_launch_id {launch} - CTA {x},{y},0 - warp {warp} - {op} -");
            let base: u64 = *[0x7f1a_2e00_0000u64, 0xffff_ffff_ffff_f000, 0x1000, 1 << 50]
                .choose(rng)
                .expect("bases");
            let stride: u64 = *[0u64, 4, 8, 4096, 1 << 22].choose(rng).expect("strides");
            for lane in 0..32u64 {
                let a = if rng.gen_bool(0.1) {
                    0
                } else {
                    base.wrapping_add(lane.wrapping_mul(stride))
                };
                let _ = write!(t, " 0x{a:016x}");
            }
            t.push_str(" \n");
        }
    }
    t
}

impl Target for Nvbit {
    fn name(&self) -> &'static str {
        "nvbit"
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Input {
        text_trace_input(
            rng,
            FILE,
            "configs/traces/nvbit-tiny.txt",
            generate_text,
            0.85,
        )
    }

    fn run(&self, dir: &Path) -> Outcome {
        open_trace_file(&dir.join(FILE))
    }
}
