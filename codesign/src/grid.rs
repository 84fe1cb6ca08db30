//! The parameter points a study visits: a quick default grid per block (the paper's point,
//! our default and a few smaller ones), or `--grid FILE`, a TOML file listing values per
//! key whose every combination is a point.
//!
//! A grid file for `--block rt` reads like the block's section of `configs/hw.toml` with a
//! list for each key varied (keys not listed keep the base configuration's value):
//!
//! ```toml
//! entries = [8, 16, 32]
//! counter_bits = [16, 32]
//! replacement = ["nru", "ranks"]
//! ```

use crate::CodesignError;
use mcmvm_models::config::{AttRecency, HwConfig, RtReplacement};
use mcmvm_protocol::protocol::BlockKind;
use std::path::Path;

/// The keys a grid may vary, per block (the block's `hw.toml` section). `alloc_id_bits`,
/// `ptes_per_line` and `page_frames_log2` are accepted but the RTL port (8-bit IDs), the
/// 128-byte PTE line and the system's 64 KB pages each allow one value (validation says so).
pub fn keys(block: BlockKind) -> &'static [&'static str] {
    match block {
        BlockKind::RemoteTracker => &["entries", "counter_bits", "alloc_id_bits", "replacement"],
        BlockKind::TlbCoalescer => &["output_registers", "page_frames_log2", "ptes_per_line"],
        BlockKind::AccessTimeTracker => &["objects", "timer_bits", "recency"],
    }
}

/// The `hw.toml` section of a block.
pub fn section(block: BlockKind) -> &'static str {
    match block {
        BlockKind::RemoteTracker => "remote_tracker",
        BlockKind::TlbCoalescer => "tlb_coalescer",
        BlockKind::AccessTimeTracker => "access_time_tracker",
    }
}

/// One parameter point: the whole hardware configuration with the block's keys set.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// `entries=16 counter_bits=32 replacement=nru`: the block's keys in [`keys`] order.
    pub label: String,
    pub hw: HwConfig,
}

impl Point {
    /// The point of `hw` for `block`, labelled by the block's keys.
    pub fn of(block: BlockKind, hw: HwConfig) -> Point {
        let label = params(block, &hw)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        Point { label, hw }
    }
}

/// A point's name in its work directory and result file: its values in [`keys`] order,
/// `16_32_8_nru` (the keys are the block's, so the values alone say which point it is).
/// Two points of a block share a name only if they share every parameter, whatever grid
/// they came from.
pub fn point_name<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    values
        .into_iter()
        .map(|v| {
            v.chars()
                .map(|c| match c {
                    'a'..='z' | 'A'..='Z' | '0'..='9' | '-' => c,
                    _ => '+',
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("_")
}

impl Point {
    /// [`point_name`] of this point's values for `block`.
    pub fn name(&self, block: BlockKind) -> String {
        point_name(params(block, &self.hw).iter().map(|(_, v)| v.as_str()))
    }
}

/// The block's keys and their values in `hw`, as grid-file text.
pub fn params(block: BlockKind, hw: &HwConfig) -> Vec<(&'static str, String)> {
    let name = |v: &dyn erased::Named| v.name();
    match block {
        BlockKind::RemoteTracker => {
            let r = &hw.remote_tracker;
            vec![
                ("entries", r.entries.to_string()),
                ("counter_bits", r.counter_bits.to_string()),
                ("alloc_id_bits", r.alloc_id_bits.to_string()),
                ("replacement", name(&r.replacement)),
            ]
        }
        BlockKind::TlbCoalescer => {
            let c = &hw.tlb_coalescer;
            vec![
                ("output_registers", c.output_registers.to_string()),
                ("page_frames_log2", c.page_frames_log2.to_string()),
                ("ptes_per_line", c.ptes_per_line.to_string()),
            ]
        }
        BlockKind::AccessTimeTracker => {
            let a = &hw.access_time_tracker;
            vec![
                ("objects", a.objects.to_string()),
                ("timer_bits", a.timer_bits.to_string()),
                ("recency", name(&a.recency)),
            ]
        }
    }
}

/// The TOML names of the enum-valued keys (their serde names).
mod erased {
    pub trait Named {
        fn name(&self) -> String;
    }
    impl<T: serde::Serialize> Named for T {
        fn name(&self) -> String {
            match toml::Value::try_from(self) {
                Ok(toml::Value::String(s)) => s,
                Ok(v) => v.to_string(),
                Err(e) => format!("<{e}>"),
            }
        }
    }
}

/// The papers' point of a block: CLAP's RT (32 entries, 32-bit counters, the least
/// recently updated row replaced: exact ranks), CLAP's combinational coalescer, and Forest's
/// 32-object ATT (the paper gives no recency structure; the original age matrix stands in).
pub fn paper_point(block: BlockKind, base: &HwConfig) -> Point {
    let mut hw = base.clone();
    match block {
        BlockKind::RemoteTracker => {
            let r = &mut hw.remote_tracker;
            r.entries = 32;
            r.counter_bits = 32;
            r.alloc_id_bits = 8;
            r.replacement = RtReplacement::Ranks;
        }
        BlockKind::TlbCoalescer => {
            let c = &mut hw.tlb_coalescer;
            c.output_registers = false;
            c.page_frames_log2 = 4;
            c.ptes_per_line = 16;
        }
        BlockKind::AccessTimeTracker => {
            let a = &mut hw.access_time_tracker;
            a.objects = 32;
            a.timer_bits = 32;
            a.recency = AttRecency::AgeMatrix;
        }
    }
    Point::of(block, hw)
}

/// Our default point: the built-in configuration (equal to `configs/hw.toml`).
pub fn default_point(block: BlockKind, base: &HwConfig) -> Point {
    let defaults = HwConfig::default();
    let mut hw = base.clone();
    match block {
        BlockKind::RemoteTracker => hw.remote_tracker = defaults.remote_tracker,
        BlockKind::TlbCoalescer => hw.tlb_coalescer = defaults.tlb_coalescer,
        BlockKind::AccessTimeTracker => hw.access_time_tracker = defaults.access_time_tracker,
    }
    Point::of(block, hw)
}

/// Whether two points set the block's keys alike.
pub fn same_block_params(block: BlockKind, a: &HwConfig, b: &HwConfig) -> bool {
    params(block, a) == params(block, b)
}

/// The quick default grid: the paper's point, our default, and two smaller points (RT: 16
/// entries, as CLAP says suffice, and 8 entries with 16-bit counters; ATT: 16 objects, and
/// 16-bit timers). The coalescer has two: its only free parameter is the output registers
/// (the system's 64 KB pages fix `page_frames_log2`).
pub fn default_grid(block: BlockKind, base: &HwConfig) -> Vec<Point> {
    let paper = paper_point(block, base);
    let ours = default_point(block, base);
    let mut points = vec![paper, ours.clone()];
    let mut smaller = |f: &dyn Fn(&mut HwConfig)| {
        let mut hw = ours.hw.clone();
        f(&mut hw);
        points.push(Point::of(block, hw));
    };
    match block {
        BlockKind::RemoteTracker => {
            smaller(&|h| h.remote_tracker.entries = 16);
            smaller(&|h| {
                h.remote_tracker.entries = 8;
                h.remote_tracker.counter_bits = 16;
            });
        }
        BlockKind::TlbCoalescer => {}
        BlockKind::AccessTimeTracker => {
            smaller(&|h| h.access_time_tracker.objects = 16);
            smaller(&|h| h.access_time_tracker.timer_bits = 16);
        }
    }
    points
}

/// The grid of `path` for `block` over `base`: every combination of the listed values, in
/// file order (the first key varies slowest). Each point is validated like `hw.toml`.
pub fn load_grid(
    path: &Path,
    block: BlockKind,
    base: &HwConfig,
) -> Result<Vec<Point>, CodesignError> {
    let text = std::fs::read_to_string(path).map_err(|source| CodesignError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_grid(&text, path, block, base)
}

/// [`load_grid`] on text already read from `path` (used in messages only).
pub fn parse_grid(
    text: &str,
    path: &Path,
    block: BlockKind,
    base: &HwConfig,
) -> Result<Vec<Point>, CodesignError> {
    let bad = |key: &str, message: String| CodesignError::Grid {
        path: path.to_path_buf(),
        key: key.to_string(),
        message,
    };
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let msg = e
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        bad("-", msg)
    })?;
    if table.is_empty() {
        return Err(bad(
            "-",
            format!("no key: expected one of {}", keys(block).join(", ")),
        ));
    }
    let mut axes: Vec<(String, Vec<toml::Value>)> = Vec::new();
    for (key, value) in &table {
        if !keys(block).contains(&key.as_str()) {
            return Err(bad(
                key,
                format!(
                    "not a key of --block {}: expected one of {}",
                    block.short_name(),
                    keys(block).join(", ")
                ),
            ));
        }
        let values = match value {
            toml::Value::Array(a) if !a.is_empty() => a.clone(),
            toml::Value::Array(_) => return Err(bad(key, "empty list".into())),
            v => vec![v.clone()],
        };
        axes.push((key.clone(), values));
    }
    let mut points = Vec::new();
    for combo in combinations(&axes) {
        let hw = apply(block, base, &combo, path)?;
        let point = Point::of(block, hw);
        if !points.contains(&point) {
            points.push(point);
        }
    }
    Ok(points)
}

/// Why a grid point's keys do not make a `hw.toml`.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error("the base configuration: {0}")]
    Base(#[from] toml::ser::Error),
    #[error("no section `{0}` in the base configuration")]
    NoSection(&'static str),
    /// serde's message, trimmed (it may not name the key; [`apply`] finds it).
    #[error("{}", .0.message().trim())]
    Value(#[from] toml::de::Error),
}

/// `base` with `keys` set in section `sec`, deserialised as `hw.toml`.
fn with_keys(
    base: &HwConfig,
    sec: &'static str,
    keys: &[(String, toml::Value)],
) -> Result<HwConfig, KeysError> {
    let mut tree = toml::Table::try_from(base)?;
    let Some(toml::Value::Table(t)) = tree.get_mut(sec) else {
        return Err(KeysError::NoSection(sec));
    };
    for (k, v) in keys {
        t.insert(k.clone(), v.clone());
    }
    Ok(toml::Value::Table(tree).try_into()?)
}

/// Every combination of the axes' values, the first axis varying slowest.
fn combinations(axes: &[(String, Vec<toml::Value>)]) -> Vec<Vec<(String, toml::Value)>> {
    let mut out: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
    for (key, values) in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    out
}

/// `base` with the block's section overridden by `combo`, parsed and validated as hw.toml.
fn apply(
    block: BlockKind,
    base: &HwConfig,
    combo: &[(String, toml::Value)],
    path: &Path,
) -> Result<HwConfig, CodesignError> {
    let sec = section(block);
    let bad = |key: String, message: String| CodesignError::Grid {
        path: path.to_path_buf(),
        key,
        message,
    };
    let hw = with_keys(base, sec, combo).map_err(|e| {
        // Name the first key that fails on its own (serde's message may not name it).
        let key = combo
            .iter()
            .find(|kv| with_keys(base, sec, std::slice::from_ref(kv)).is_err())
            .map_or_else(|| sec.to_string(), |(k, _)| format!("{sec}.{k}"));
        bad(key, e.to_string())
    })?;
    hw.validate(path).map_err(|e| CodesignError::GridValue {
        path: path.to_path_buf(),
        source: e,
    })?;
    if block == BlockKind::TlbCoalescer && hw.tlb_coalescer.page_frames_log2 != 4 {
        return Err(CodesignError::Grid {
            path: path.to_path_buf(),
            key: "tlb_coalescer.page_frames_log2".into(),
            message: format!(
                "the system model's coalesced pages are 64 KB (4); got {} (the RTL alone takes \
                 0..=9: `mcmvm synth` with a hw.toml)",
                hw.tlb_coalescer.page_frames_log2
            ),
        });
    }
    Ok(hw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_file_gives_every_combination_in_file_order() {
        let base = HwConfig::default();
        let g = parse_grid(
            "entries = [8, 16]\nreplacement = [\"nru\", \"ranks\"]\n",
            Path::new("g.toml"),
            BlockKind::RemoteTracker,
            &base,
        )
        .unwrap();
        let labels: Vec<_> = g.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "entries=8 counter_bits=32 alloc_id_bits=8 replacement=nru",
                "entries=8 counter_bits=32 alloc_id_bits=8 replacement=ranks",
                "entries=16 counter_bits=32 alloc_id_bits=8 replacement=nru",
                "entries=16 counter_bits=32 alloc_id_bits=8 replacement=ranks",
            ]
        );
        assert_eq!(g[3].hw.remote_tracker.replacement, RtReplacement::Ranks);
        assert_eq!(g[3].hw.access_time_tracker, base.access_time_tracker);
        let names: Vec<_> = g.iter().map(|p| p.name(BlockKind::RemoteTracker)).collect();
        assert_eq!(
            names,
            ["8_32_8_nru", "8_32_8_ranks", "16_32_8_nru", "16_32_8_ranks"]
        );
        assert_eq!(point_name(["tree-plru", "a b/c"]), "tree-plru_a+b+c");
    }

    #[test]
    fn bad_grid_files_name_the_file_and_key() {
        let base = HwConfig::default();
        let err = |text: &str, block| {
            parse_grid(text, Path::new("g.toml"), block, &base)
                .unwrap_err()
                .to_string()
        };
        let e = err("entries = [64]", BlockKind::RemoteTracker);
        assert!(e.starts_with("g.toml: key `remote_tracker.entries`"), "{e}");
        let e = err("objects = [8]", BlockKind::RemoteTracker);
        assert!(e.contains("key `objects`: not a key of --block rt"), "{e}");
        let e = err("replacement = [\"lru\"]", BlockKind::RemoteTracker);
        assert!(
            e.starts_with("g.toml: key `remote_tracker.replacement`: unknown variant `lru`"),
            "{e}"
        );
        let e = err("page_frames_log2 = [3]", BlockKind::TlbCoalescer);
        assert!(
            e.contains("key `tlb_coalescer.page_frames_log2`: the system model"),
            "{e}"
        );
        let e = err("timer_bits = []", BlockKind::AccessTimeTracker);
        assert!(e.contains("key `timer_bits`: empty list"), "{e}");
        assert!(!err("x = ", BlockKind::AccessTimeTracker).contains('\n'));
    }

    #[test]
    fn the_default_grid_holds_the_paper_point_and_ours() {
        let base = HwConfig::default();
        for b in BlockKind::ALL {
            let g = default_grid(b, &base);
            assert!(g.len() >= 2 && g.len() <= 4, "{b:?}");
            assert!(g.iter().any(|p| p == &paper_point(b, &base)));
            assert!(g.iter().any(|p| p.hw == base));
            for p in &g {
                p.hw.validate(Path::new("grid")).unwrap();
            }
        }
        let rt = default_grid(BlockKind::RemoteTracker, &base);
        assert_eq!(rt[0].hw.remote_tracker.replacement, RtReplacement::Ranks);
        assert_eq!(rt[3].hw.remote_tracker.entries, 8);
    }
}
