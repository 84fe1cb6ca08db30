//! The TOML configs: GPU timing model (`GpuConfig::parse_with`), UVM (`UvmConfig::from_text`),
//! hardware blocks (`HwConfig::load`), each with `--set KEY=VALUE` overrides where the CLI
//! takes them. Inputs: the shipped configs changed value by value in the TOML tree (wrong
//! types, edge numbers, unknown and missing keys, deep nesting) and then as text.

use super::{fixture, rejection, Outcome, Target, Verdict};
use crate::mutate::{edge_number, mutate};
use crate::runner::FailureKind;
use crate::Input;
use mcmvm_models::config::{ConfigError, HwConfig};
use mcmvm_models::gpu::config::GpuConfig;
use mcmvm_models::uvm::config::UvmConfig;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;

#[derive(Clone, Copy)]
enum Kind {
    Gpu,
    Uvm,
    Hw,
}

pub struct ConfigTarget {
    name: &'static str,
    fixtures: &'static [&'static str],
    kind: Kind,
}

pub static GPU: ConfigTarget = ConfigTarget {
    name: "gpu-config",
    fixtures: &[
        "configs/mcm-4chiplet.toml",
        "configs/mcm-8chiplet.toml",
        "configs/gpu-turing.toml",
    ],
    kind: Kind::Gpu,
};
pub static UVM: ConfigTarget = ConfigTarget {
    name: "uvm-config",
    fixtures: &["configs/uvm-turing.toml"],
    kind: Kind::Uvm,
};
pub static HW: ConfigTarget = ConfigTarget {
    name: "hw-config",
    fixtures: &["configs/hw.toml"],
    kind: Kind::Hw,
};

const FILE: &str = "config.toml";
/// Overrides, one `KEY=VALUE` a line (what `--set` passes).
const SET: &str = "set.txt";

fn random_value(rng: &mut ChaCha8Rng, depth: usize) -> toml::Value {
    use toml::Value;
    match rng.gen_range(0..9) {
        0 => Value::Integer(
            *[0i64, 1, -1, i64::MAX, i64::MIN, 1 << 32, 33, 1 << 40]
                .choose(rng)
                .expect("ints"),
        ),
        1 => Value::Float(
            *[0.0, -0.0, -1.0, 1e308, f64::INFINITY, f64::NAN, 1e-300, 0.5]
                .choose(rng)
                .expect("floats"),
        ),
        2 => Value::Boolean(rng.gen()),
        3 => Value::String(
            ["", "ranks", "nru", "tree-plru", "x", "\u{0}"]
                .choose(rng)
                .expect("strings")
                .to_string(),
        ),
        4 if depth < 3 => Value::Array(
            (0..rng.gen_range(0..4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        5 if depth < 3 => {
            let mut t = toml::Table::new();
            t.insert("x".into(), random_value(rng, depth + 1));
            Value::Table(t)
        }
        _ => Value::Integer(rng.gen_range(0..100_000)),
    }
}

/// Every dotted key path of a table, to pick one to change.
fn paths(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in t {
        let p = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        out.push(p.clone());
        if let toml::Value::Table(sub) = v {
            paths(sub, &p, out);
        }
    }
}

fn at_path<'t>(t: &'t mut toml::Table, path: &str) -> Option<(&'t mut toml::Table, String)> {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop()?.to_string();
    let mut node = t;
    for p in parts {
        node = node.get_mut(p)?.as_table_mut()?;
    }
    Some((node, last))
}

fn mutate_tree(text: &str, rng: &mut ChaCha8Rng) -> String {
    let Ok(mut tree) = text.parse::<toml::Table>() else {
        return text.to_string();
    };
    let mut keys = Vec::new();
    paths(&tree, "", &mut keys);
    for _ in 0..rng.gen_range(1..4) {
        let Some(path) = keys.choose(rng).cloned() else {
            break;
        };
        let Some((table, key)) = at_path(&mut tree, &path) else {
            continue;
        };
        match rng.gen_range(0..5) {
            0 => {
                table.remove(&key);
            }
            1 => {
                if let Some(v) = table.remove(&key) {
                    table.insert(format!("{key}_typo"), v);
                }
            }
            _ => {
                table.insert(key, random_value(rng, 0));
            }
        }
    }
    toml::to_string(&tree).unwrap_or_else(|_| text.to_string())
}

/// Deep nesting: arrays, inline tables or dotted table headers.
fn deep(rng: &mut ChaCha8Rng) -> String {
    let d = *[10usize, 100, 1000, 100_000].choose(rng).expect("depths");
    match rng.gen_range(0..3) {
        0 => format!("deep = {}1{}\n", "[".repeat(d), "]".repeat(d)),
        1 => format!("deep = {}1{}\n", "{a=".repeat(d), "}".repeat(d)),
        _ => format!("[{}]\nx = 1\n", vec!["a"; d].join(".")),
    }
}

impl Target for ConfigTarget {
    fn name(&self) -> &'static str {
        self.name
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Input {
        let base = fixture(self.fixtures.choose(rng).expect("fixtures"));
        let mut text = String::from_utf8_lossy(&base).into_owned();
        if rng.gen_bool(0.6) {
            text = mutate_tree(&text, rng);
        }
        if rng.gen_bool(0.05) {
            text.push_str(&deep(rng));
        }
        let bytes = if rng.gen_bool(0.5) {
            mutate(text.as_bytes(), rng, 3)
        } else {
            text.into_bytes()
        };
        let mut input = Input::single(FILE, bytes);
        if !matches!(self.kind, Kind::Hw) && rng.gen_bool(0.2) {
            let mut keys = Vec::new();
            if let Ok(tree) = String::from_utf8_lossy(&base).parse::<toml::Table>() {
                paths(&tree, "", &mut keys);
            }
            let mut set = String::new();
            for _ in 0..rng.gen_range(1..4) {
                let key = match rng.gen_range(0..6) {
                    0 => "a.".repeat(rng.gen_range(1..2000)) + "b",
                    1 => String::new(),
                    _ => keys.choose(rng).cloned().unwrap_or_default(),
                };
                let value = match rng.gen_range(0..4) {
                    0 => "[[[[".to_string(),
                    1 => "\"quoted\"".to_string(),
                    _ => edge_number(rng),
                };
                let eq = if rng.gen_bool(0.95) { "=" } else { "" };
                set.push_str(&format!("{key}{eq}{value}\n"));
            }
            input.logical_bytes += set.len() as u64;
            input.files.push((SET.into(), set.into_bytes()));
        }
        input
    }

    fn run(&self, dir: &Path) -> Outcome {
        let path = dir.join(FILE);
        let overrides: Vec<String> = std::fs::read_to_string(dir.join(SET))
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default();
        let result = match self.kind {
            Kind::Gpu => std::fs::read_to_string(&path)
                .map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })
                .and_then(|text| GpuConfig::parse_with(&text, &path, &overrides).map(drop)),
            Kind::Uvm => UvmConfig::load(&path, &overrides).map(drop),
            Kind::Hw => HwConfig::load(&path).map(drop),
        };
        match result {
            Ok(()) => Ok(Verdict::Accepted),
            Err(e) => {
                let message = e.to_string();
                // An error in the file itself names its line; an override's error its key.
                let placed = match &e {
                    ConfigError::Parse { .. } if overrides.is_empty() => message.contains(" line "),
                    ConfigError::Invalid { .. } => message.contains("key `"),
                    ConfigError::Override { .. } => message.contains("--set `"),
                    _ => true,
                };
                if !placed {
                    return Err((
                        FailureKind::Message,
                        format!("names neither the line nor the key: {message:?}"),
                    ));
                }
                rejection(&message, &path, None)
            }
        }
    }
}
