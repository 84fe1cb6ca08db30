//! The run file of one job of a split sweep: `OUT/runs/<suite>-<N>-<name>.json`, the
//! sweep's identity ([`SweepId`]), the job's head fields and what the tables need of the
//! run (`summary`), then its full report (`report`). `--task-id`, the in-process sweep and
//! `--resume` write them; `sweep merge` and the in-process sweep's tables read them.

use mcmvm_models::workload::Scale;
use serde::{Deserialize, Serialize};

/// What identifies a sweep: every run file of one sweep carries the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepId {
    pub suite: String,
    /// How many jobs the sweep has.
    pub runs: usize,
    /// The options every job shares, as shell words after `--suite S` (without
    /// `--task-id` and `--out`).
    pub args: String,
    pub seed: u64,
    /// `--scale`: a multiplier (its exact text) or `paper`.
    pub scale: Scale,
    /// forest: the oversubscriptions of the tables, in order (exact text).
    pub oversubs: Vec<String>,
    /// `--robustness`: the design over the plausible box (`corners`, `lhs N seed S`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robustness: Option<String>,
}

/// A run file without its `report` (which follows it, see [`run_file_text`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct RunHead<S> {
    pub sweep: SweepId,
    pub task: usize,
    pub workload: String,
    pub policy: String,
    /// forest: the run's oversubscription (exact text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<String>,
    /// What the tables need of the run.
    pub summary: S,
}

/// How the run files separate the head from the full report: the top-level key, which is
/// the only line with exactly two spaces before a quote and `"report"` (strings hold no
/// raw newlines; nested keys are indented further).
const REPORT_KEY: &str = "\n  \"report\": ";

/// A run file: the head's pretty JSON with the report's pretty JSON as its last member —
/// exactly what serde_json writes for the two together.
pub fn run_file_text(head: &str, report: &str) -> String {
    let head = head.strip_suffix("\n}").unwrap_or(head);
    format!("{head},{REPORT_KEY}{}\n}}\n", report.replace('\n', "\n  "))
}

/// The report's pretty JSON from a run file's text (None: not in [`run_file_text`]'s
/// layout).
pub fn report_text(file: &str) -> Option<String> {
    let (_, rest) = file.split_once(REPORT_KEY)?;
    let body = rest.trim_end().strip_suffix('}')?.trim_end();
    let mut out = String::with_capacity(body.len());
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(line.strip_prefix("  ")?);
        } else {
            out.push_str(line);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_comes_back_byte_for_byte() {
        let head = serde_json::to_string_pretty(&serde_json::json!({"a": [1, {"b": "x"}]}));
        let report = "{\n  \"x\": [\n    1,\n    2\n  ],\n  \"report\": {}\n}";
        let text = run_file_text(&head.unwrap(), report);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["report"]["x"][1], 2);
        assert_eq!(report_text(&text).as_deref(), Some(report));
        assert_eq!(report_text("{\n  \"a\": 1\n}"), None);
    }
}
