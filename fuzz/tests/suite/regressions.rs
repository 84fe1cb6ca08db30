//! Every input saved under `fuzz/regressions/` run again: what each did before its fix is in
//! `fuzz/regressions/README.md`; now each is accepted or rejected cleanly, as listed.

use mcmvm_fuzz::run_regressions;
use mcmvm_fuzz::targets::Verdict;
use std::path::Path;
use std::time::Duration;

const EXPECTED: &[(&str, &str, Verdict)] = &[
    ("mcmvm-trace", "name-inside-a-warp-run", Verdict::Accepted),
    ("mcmvm-trace", "name-with-extra-fields", Verdict::Rejected),
    ("accelsim", "grid-of-2-32-blocks", Verdict::Accepted),
    ("accelsim", "last-page", Verdict::Accepted),
    ("nvbit", "block-size-overflow", Verdict::Rejected),
    ("nvbit", "grid-of-2-32-blocks", Verdict::Accepted),
    ("nvbit", "last-page", Verdict::Accepted),
    ("vcd", "deep-scopes", Verdict::Rejected),
    ("vcd", "long-jump", Verdict::Accepted),
];

#[test]
fn every_saved_regression_input_is_accepted_or_rejected_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let runs = run_regressions(&root, Duration::from_secs(20));
    let mut seen = Vec::new();
    let mut wrong = Vec::new();
    for r in &runs {
        println!(
            "{}/{}: {:?}, peak {} KB",
            r.target,
            r.case,
            r.outcome,
            r.peak_bytes / 1024
        );
        let expected = EXPECTED
            .iter()
            .find(|(t, c, _)| *t == r.target && *c == r.case)
            .unwrap_or_else(|| panic!("{}/{}: add it to EXPECTED", r.target, r.case));
        if r.outcome != Ok(expected.2) {
            wrong.push(format!(
                "{}/{}: {:?}, expected {:?}",
                r.target, r.case, r.outcome, expected.2
            ));
        }
        seen.push((r.target, r.case.as_str()));
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(
        seen.len(),
        EXPECTED.len(),
        "every listed case is on disk: {seen:?}"
    );
}
