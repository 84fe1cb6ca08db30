//! Recorded VCD stimulus (`mcmvm cosim --block B --stimulus FILE`), through
//! `mcmvm_cosim::stimulus::read_stimulus` for the block the file is named after.

use super::{fixture, gzip, rejection, Outcome, Target, Verdict};
use crate::mutate::{edge_number, mutate};
use crate::runner::FailureKind;
use crate::Input;
use mcmvm_cosim::stimulus::read_stimulus;
use mcmvm_models::protocol::{AttIn, CoalIn, Ports, RtIn};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;
use std::path::Path;

pub struct Vcd;

const BLOCKS: &[&str] = &["rt", "coalescer", "att"];

fn ports(block: &str) -> &'static [mcmvm_models::protocol::PortDesc] {
    match block {
        "rt" => RtIn::PORTS,
        "coalescer" => CoalIn::PORTS,
        _ => AttIn::PORTS,
    }
}

fn id(i: usize) -> String {
    let c = (b'!' + (i % 90) as u8) as char;
    if i < 90 {
        c.to_string()
    } else {
        format!("{c}{}", i / 90)
    }
}

fn generate_text(block: &str, rng: &mut ChaCha8Rng) -> String {
    let ports = ports(block);
    let mut t = String::from("$timescale 1 ns $end\n");
    if rng.gen_bool(0.05) {
        let d = *[10usize, 1000, 100_000].choose(rng).expect("depths");
        t.push_str(&"$scope module deep $end\n".repeat(d));
        t.push_str(&"$upscope $end\n".repeat(d));
    }
    t.push_str("$scope module inputs $end\n");
    for (i, p) in ports.iter().enumerate() {
        let width = if rng.gen_bool(0.02) {
            edge_number(rng)
        } else {
            p.width.to_string()
        };
        let _ = writeln!(t, "$var wire {width} {} {} $end", id(i), p.name);
    }
    t.push_str("$upscope $end\n$scope module twin $end\n$var wire 1 ~ out $end\n$upscope $end\n$enddefinitions $end\n");
    let mut now = 0u64;
    for _ in 0..rng.gen_range(0..30) {
        let _ = writeln!(t, "#{now}");
        for _ in 0..rng.gen_range(0..4) {
            let i = rng.gen_range(0..ports.len());
            let p = &ports[i];
            let bit = || {
                [
                    "0", "1", "1", "0", "0", "1", "1", "0", "0", "1", "1", "0", "x", "z",
                ]
            };
            if p.width == 1 && rng.gen_bool(0.9) {
                let _ = writeln!(t, "{}{}", bit().choose(rng).expect("bits"), id(i));
            } else {
                let bits: String = (0..rng.gen_range(1..=p.width.max(1) as usize + 1))
                    .map(|_| {
                        if rng.gen_bool(0.98) {
                            if rng.gen() {
                                '1'
                            } else {
                                '0'
                            }
                        } else {
                            'x'
                        }
                    })
                    .collect();
                let _ = writeln!(t, "b{bits} {}", id(i));
            }
        }
        now += match rng.gen_range(0..50) {
            0 => 100_000_000,
            1 => 1 << 40,
            2..=5 => rng.gen_range(2..1000),
            _ => 1,
        };
    }
    let _ = writeln!(t, "#{now}");
    t
}

impl Target for Vcd {
    fn name(&self) -> &'static str {
        "vcd"
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Input {
        let mut block = *BLOCKS.choose(rng).expect("blocks");
        let text = match rng.gen_range(0..10) {
            0 => {
                block = "rt";
                fixture("testbenches/recorded/rt-bfs-clap-chiplet2.vcd")
            }
            1 => {
                block = "coalescer";
                fixture("testbenches/recorded/coalescer-bfs-clap-chiplet2.vcd")
            }
            _ => generate_text(block, rng).into_bytes(),
        };
        let text = if rng.gen_bool(0.7) {
            mutate(&text, rng, 4)
        } else {
            text
        };
        let logical = text.len() as u64;
        let (name, bytes) = if rng.gen_bool(0.15) {
            let mut z = gzip(&text);
            if rng.gen_bool(0.2) {
                z = mutate(&z, rng, 1);
            }
            (format!("{block}.vcd.gz"), z)
        } else {
            (format!("{block}.vcd"), text)
        };
        let mut input = Input::single(&name, bytes);
        input.logical_bytes = logical;
        input
    }

    fn run(&self, dir: &Path) -> Outcome {
        let Some(path) = std::fs::read_dir(dir).ok().and_then(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().contains(".vcd"))
        }) else {
            return Err((FailureKind::Readback, "no .vcd file in the input".into()));
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let result = if name.starts_with("rt") {
            read_stimulus::<RtIn>(&path).map(|s| s.len())
        } else if name.starts_with("coalescer") {
            read_stimulus::<CoalIn>(&path).map(|s| s.len())
        } else {
            read_stimulus::<AttIn>(&path).map(|s| s.len())
        };
        match result {
            Ok(cycles) if cycles > 0 => Ok(Verdict::Accepted),
            Ok(_) => Err((FailureKind::Readback, "accepted with no cycles".into())),
            Err(e) => rejection(&e.to_string(), &path, None),
        }
    }
}
