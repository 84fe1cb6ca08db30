//! `mcmvm sweep --suite forest-sensitivity`: how Forest's results move with each of its
//! thresholds, on the GPU timing model ([`UvmGpu`], the Forest sweep's GPU). One knob at a time is set to each of a few values around its default (every
//! other key keeps the config's value); Forest runs the whole suite at each point and is
//! compared with one TBNp baseline per workload (TBNp reads none of these keys).
//!
//! Reported per point: the geometric-mean speed-up over TBNp, the mean profiling steps, and
//! how many objects the detector put in each class — a threshold that matters moves the
//! classes first and the speed-up second.

use serde::Serialize;

use super::config::UvmConfig;
use super::gpu_run::UvmGpu;
use super::sweep::{geomean_speedup, run_parallel};
use super::{UvmError, UvmMetrics, UvmPolicy};

/// The thresholds swept and the values tried (the default is among them).
pub const KNOBS: [(&str, &[&str]); 8] = [
    ("forest.apd.r2", &["0.6", "0.8", "0.9", "0.97"]),
    ("forest.apd.coverage", &["0.25", "0.5", "0.75"]),
    ("forest.apd.intensity", &["0.25", "0.5", "0.75"]),
    ("forest.apd.min_pages", &["8", "16", "64"]),
    ("forest.apd.min_recaptures", &["2", "8", "32"]),
    ("forest.apd.max_steps", &["4", "16", "64"]),
    ("forest.apd.lc_stable_steps", &["1", "2", "4"]),
    ("att.profiling_threshold", &["64", "256", "1024"]),
];

/// Classes in the order they are counted.
const CLASSES: [&str; 4] = ["LS", "HCHI", "HCLI", "LC"];

/// One knob at one value.
#[derive(Debug, Clone, Serialize)]
pub struct SensitivityPoint {
    pub key: String,
    pub value: String,
    /// Forest's speed-up over TBNp per workload, in suite order.
    pub speedups: Vec<f64>,
    pub geomean_speedup: f64,
    pub mean_profiling_steps: f64,
    /// Objects classified LS, HCHI, HCLI, LC over the whole suite.
    pub class_counts: [u64; 4],
}

/// The whole study.
#[derive(Debug, Clone, Serialize)]
pub struct SensitivityReport {
    pub workloads: Vec<String>,
    pub oversubscription: f64,
    pub scale: f64,
    pub seed: u64,
    pub points: Vec<SensitivityPoint>,
}

/// Run every knob of [`KNOBS`] over `workloads` on `gpu`. `base` names the UVM config file
/// the overrides apply to; `overrides` are the user's `--set`-style changes on top of it.
pub fn sensitivity(
    gpu: &UvmGpu,
    base: &std::path::Path,
    overrides: &[String],
    workloads: &[String],
    scale: f64,
    seed: u64,
) -> Result<SensitivityReport, UvmError> {
    let cfg_with = |extra: Option<String>| -> Result<UvmConfig, UvmError> {
        let mut all = overrides.to_vec();
        all.extend(extra);
        Ok(UvmConfig::load(base, &all)?)
    };
    let base_cfg = cfg_with(None)?;
    let run = |w: &String, cfg: &UvmConfig, p: UvmPolicy| -> Result<UvmMetrics, UvmError> {
        let wl = crate::workload::by_name(w, scale, seed)?;
        gpu.run(wl.as_ref(), cfg, p, scale, seed)
    };
    let baselines = run_parallel(workloads, |w| run(w, &base_cfg, UvmPolicy::Tbnp))?;

    let mut jobs = Vec::new();
    for (key, values) in KNOBS {
        for value in values {
            let cfg = cfg_with(Some(format!("{key}={value}")))?;
            for (i, w) in workloads.iter().enumerate() {
                jobs.push((key, *value, i, w.clone(), cfg.clone()));
            }
        }
    }
    let runs = run_parallel(&jobs, |(_, _, _, w, cfg)| run(w, cfg, UvmPolicy::Forest))?;
    Ok(SensitivityReport {
        workloads: workloads.to_vec(),
        oversubscription: base_cfg.memory.oversubscription,
        scale,
        seed,
        points: knob_points(&jobs, &runs, &baselines),
    })
}

/// One knob setting's run: (key, value, workload index, workload, its config).
type KnobJob = (&'static str, &'static str, usize, String, UvmConfig);

/// One point per knob value, in job order: speed-ups over the TBNp `baselines`, mean
/// profiling steps and the classes found.
fn knob_points(
    jobs: &[KnobJob],
    runs: &[UvmMetrics],
    baselines: &[UvmMetrics],
) -> Vec<SensitivityPoint> {
    let mut points: Vec<SensitivityPoint> = Vec::new();
    for ((key, value, i, _, _), m) in jobs.iter().zip(runs) {
        let fresh = points
            .last()
            .is_none_or(|p| p.key != *key || p.value != *value);
        if fresh {
            points.push(SensitivityPoint {
                key: key.to_string(),
                value: value.to_string(),
                speedups: Vec::new(),
                geomean_speedup: 0.0,
                mean_profiling_steps: 0.0,
                class_counts: [0; 4],
            });
        }
        let Some(p) = points.last_mut() else { continue };
        p.speedups
            .push(baselines[*i].cycles as f64 / m.cycles.max(1) as f64);
        p.mean_profiling_steps += m.profiling_steps as f64;
        for o in &m.objects {
            if let Some(c) = o.class.as_deref() {
                if let Some(k) = CLASSES.iter().position(|x| *x == c) {
                    p.class_counts[k] += 1;
                }
            }
        }
    }
    for p in &mut points {
        p.geomean_speedup = geomean_speedup(p.speedups.iter().copied());
        p.mean_profiling_steps /= p.speedups.len().max(1) as f64;
    }
    points
}

impl SensitivityReport {
    /// One line per knob value: geomean, profiling steps, classes, per-workload speed-ups.
    pub fn table(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = write!(
            s,
            "{:<26} {:>6} {:>8} {:>6} {:>15}",
            "threshold", "value", "geomean", "steps", "LS/HCHI/HCLI/LC"
        );
        for w in &self.workloads {
            let _ = write!(s, " {:>8}", w);
        }
        s.push('\n');
        for p in &self.points {
            let c = p.class_counts;
            let _ = write!(
                s,
                "{:<26} {:>6} {:>7.3}x {:>6.1} {:>15}",
                p.key,
                p.value,
                p.geomean_speedup,
                p.mean_profiling_steps,
                format!("{}/{}/{}/{}", c[0], c[1], c[2], c[3])
            );
            for x in &p.speedups {
                let _ = write!(s, " {:>7.2}x", x);
            }
            s.push('\n');
        }
        s
    }

    /// `sensitivity.csv` and `sensitivity.json` in `dir`.
    pub fn write(&self, dir: &std::path::Path) -> Result<(), UvmError> {
        let io = |source| UvmError::Io {
            path: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut csv =
            String::from("key,value,geomean_speedup,mean_profiling_steps,ls,hchi,hcli,lc");
        for w in &self.workloads {
            csv.push_str(&format!(",{w}"));
        }
        csv.push('\n');
        for p in &self.points {
            let c = p.class_counts;
            csv.push_str(&format!(
                "{},{},{:.6},{:.3},{},{},{},{}",
                p.key, p.value, p.geomean_speedup, p.mean_profiling_steps, c[0], c[1], c[2], c[3]
            ));
            for x in &p.speedups {
                csv.push_str(&format!(",{x:.6}"));
            }
            csv.push('\n');
        }
        std::fs::write(dir.join("sensitivity.csv"), csv).map_err(io)?;
        let json = serde_json::to_string_pretty(self).map_err(|source| UvmError::Json {
            what: "the sensitivity study",
            source,
        })?;
        std::fs::write(dir.join("sensitivity.json"), json).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every knob names a key the config accepts, every value is valid for it, and exactly
    /// one of its values is the shipped default (so each row group includes the baseline).
    #[test]
    fn every_knob_value_is_a_valid_override_and_one_is_the_default() {
        let base =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/uvm-turing.toml");
        let defaults = format!("{:?}", UvmConfig::load(&base, &[]).expect("config loads"));
        for (key, values) in KNOBS {
            let mut same = 0;
            for v in values {
                let cfg = UvmConfig::load(&base, &[format!("{key}={v}")])
                    .unwrap_or_else(|e| panic!("{key}={v}: {e}"));
                same += (format!("{cfg:?}") == defaults) as usize;
            }
            assert_eq!(same, 1, "{key}: exactly one value must be the default");
        }
    }
}
