//! `mcmvm hw` when a synthesis fails: the run still lints and co-simulates every block,
//! exits 1, and says for each block why its synthesis failed (on stderr and in
//! `hw-summary.json`), instead of leaving an empty area column.

use std::process::Command;

#[test]
fn hw_names_each_blocks_synthesis_error_when_the_liberty_file_is_unusable() {
    let dir = std::env::temp_dir().join(format!("mcmvm-cli-hw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A Liberty file yosys reads but that has no flip-flop: every block's mapping fails.
    let lib = dir.join("no-flops.lib");
    std::fs::write(
        &lib,
        "library (no_flops) {\n  cell (INVX1) {\n    area : 1;\n    pin (A) { direction : input; }\n    \
         pin (Y) { direction : output; function : \"!A\"; }\n  }\n}\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(["hw", "--cycles", "50", "--quiet", "--out"])
        .arg(&out)
        // The synthesis cache keys on the Liberty file's bytes, so no cached report answers;
        // cached lint results (the same Verilog as `mcmvm hw`'s) do.
        .env("MCMVM_LIBERTY", &lib)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcmvm runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    for block in ["remote_tracker", "tlb_coalescer", "access_time_tracker"] {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("{block}: synthesis failed: ")))
            .unwrap_or_else(|| panic!("no synthesis error for {block} in:\n{stderr}"));
        // Every block has registers: refused before yosys' generic synthesis, naming the
        // file (yosys' own failure on such a file: `synth`'s suite).
        assert!(
            line.contains("no-flops.lib: unusable Liberty file"),
            "{line}"
        );
        assert!(line.contains("no flip-flop cell"), "{line}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("hw-summary.json")).unwrap())
            .unwrap();
    let rows = summary.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        assert!(r["area"].is_null(), "{r}");
        assert!(
            r["synth_error"]
                .as_str()
                .is_some_and(|e| e.contains("no flip-flop cell")),
            "{r}"
        );
        assert_eq!(r["lint"], "clean", "{r}");
        assert_eq!(r["mismatch"], false, "{r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
