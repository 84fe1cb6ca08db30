//! Verilog emission of the three hardware blocks.
//!
//! rust-hdl always names the top module `top` and every submodule after its path
//! (`top$c0$17`, one module per flip-flop instance). Three files that all define `top` cannot
//! be read into one yosys or Verilator run, so every module name is rewritten to start with
//! the block's name instead (`remote_tracker`, `remote_tracker$c0$17`). Only identifiers that
//! are module names are rewritten; signal names are left alone.
//!
//! rust-hdl's `generate_verilog` panics when the design fails its connection / loop /
//! input-write checks; here the checks run first and their result is returned as an error.

use crate::{access_time_tracker, remote_tracker, tlb_coalescer};
use mcmvm_protocol::config::HwConfig;
use mcmvm_protocol::protocol::BlockKind;
use rust_hdl::core::check_error::{check_all, CheckError};
use rust_hdl::core::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The name rust-hdl gives the top module of every design.
const RUST_HDL_TOP: &str = "top";

/// Why the Verilog of a block could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// rust-hdl's design checks failed (open signal, logic loop or a write to an input).
    #[error("{module}: rust-hdl design check failed: {detail}")]
    Check {
        /// The block's module name.
        module: &'static str,
        /// The failed check, with the signals it names.
        detail: String,
    },
    /// rust-hdl emitted no `module top(...)`: nothing to rename.
    #[error("{module}: emitted Verilog has no `module top` to rename")]
    NoTopModule {
        /// The block's module name.
        module: &'static str,
    },
    /// A file or directory could not be written.
    // The OS error is in the message, not a `#[source]`, so an anyhow chain shows it once.
    #[error("{path}: cannot write: {io}")]
    Write {
        /// The path that failed.
        path: PathBuf,
        /// The operating-system error.
        io: std::io::Error,
    },
}

/// The Verilog of one block, its top module named [`BlockKind::module_name`].
pub fn verilog(kind: BlockKind, cfg: &HwConfig) -> Result<String, EmitError> {
    let name = kind.module_name();
    match kind {
        BlockKind::RemoteTracker => {
            let mut block = remote_tracker::RemoteTrackerRtl::new(&cfg.remote_tracker);
            verilog_of(&mut block, name)
        }
        BlockKind::TlbCoalescer => {
            let mut block = tlb_coalescer::TlbCoalescerRtl::new(&cfg.tlb_coalescer);
            verilog_of(&mut block, name)
        }
        BlockKind::AccessTimeTracker => {
            let att = &cfg.access_time_tracker;
            access_time_tracker::verilog_with(att, att.recency)
        }
    }
}

/// Write `<module>.v` for every block into `dir` (created if missing); returns the paths in
/// the order of [`BlockKind::ALL`].
pub fn write_all(dir: &Path, cfg: &HwConfig) -> Result<Vec<PathBuf>, EmitError> {
    std::fs::create_dir_all(dir).map_err(|source| EmitError::Write {
        path: dir.to_path_buf(),
        io: source,
    })?;
    let mut paths = Vec::with_capacity(BlockKind::ALL.len());
    for kind in BlockKind::ALL {
        let text = verilog(kind, cfg)?;
        let path = dir.join(format!("{}.v", kind.module_name()));
        std::fs::write(&path, text).map_err(|source| EmitError::Write {
            path: path.clone(),
            io: source,
        })?;
        paths.push(path);
    }
    Ok(paths)
}

/// Connect, check and emit any rust-hdl block, renaming its modules to `module_name`.
pub fn verilog_of<B: Block>(block: &mut B, module_name: &'static str) -> Result<String, EmitError> {
    block.connect_all();
    check_all(block).map_err(|e| EmitError::Check {
        module: module_name,
        detail: describe_check_error(&e),
    })?;
    let text = generate_verilog_unchecked(block);
    rename_top_module(&text, module_name).ok_or(EmitError::NoTopModule {
        module: module_name,
    })
}

/// One readable line for a rust-hdl check failure (its own type has only `Debug`).
fn describe_check_error(e: &CheckError) -> String {
    let names = |list: &[rust_hdl::core::check_error::PathedName]| {
        list.iter()
            .map(|p| format!("{}.{}", p.path, p.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match e {
        CheckError::OpenSignal(open) => {
            let mut list: Vec<_> = open.values().cloned().collect();
            list.sort_by(|a, b| (&a.path, &a.name).cmp(&(&b.path, &b.name)));
            format!("unconnected signals: {}", names(&list))
        }
        CheckError::LogicLoops(list) => format!("logic loops through: {}", names(list)),
        CheckError::WritesToInputs(list) => format!("writes to inputs: {}", names(list)),
    }
}

/// Rename the module `top` and every `top$...` module to `new_top` / `new_top$...`.
/// Returns `None` when the text defines no module `top`.
///
/// The set of module names is read from the `module NAME(` declarations; then every
/// identifier token equal to one of them is replaced (declaration, `endmodule // NAME`
/// comment, and the instantiation `NAME instance(`). Verilog identifiers may contain `$`,
/// so `top$c0` is one token and a signal `c0$q` is never touched.
pub fn rename_top_module(text: &str, new_top: &str) -> Option<String> {
    let modules: HashSet<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("module "))
        .map(|rest| identifier_prefix(rest.trim_start()))
        .filter(|name| *name == RUST_HDL_TOP || name.starts_with("top$"))
        .collect();
    if !modules.contains(RUST_HDL_TOP) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 64 * modules.len());
    let mut rest = text;
    while let Some(start) = rest.find(is_identifier_start) {
        out.push_str(&rest[..start]);
        let from_token = &rest[start..];
        let token = identifier_prefix(from_token);
        if token.is_empty() {
            // A number such as `32'h1f`: copy it whole so its letters are not read as
            // identifiers.
            let end = from_token
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '\'' || c == '_'))
                .unwrap_or(from_token.len());
            out.push_str(&from_token[..end]);
            rest = &from_token[end..];
            continue;
        }
        // `top$...` tokens are always module names. The bare `top` is only ever declared
        // (`module top(`, `endmodule // top`), never instantiated, while a child field
        // may itself be called `top`: rename the bare word only in those two places.
        let is_module_name = modules.contains(token)
            && (token != RUST_HDL_TOP || out.ends_with("module ") || out.ends_with("// "));
        if is_module_name {
            out.push_str(new_top);
            out.push_str(&token[RUST_HDL_TOP.len()..]);
        } else {
            out.push_str(token);
        }
        rest = &from_token[token.len()..];
    }
    out.push_str(rest);
    Some(out)
}

/// Start of a Verilog simple identifier (or of a number, which `identifier_prefix` then
/// returns empty for and the caller copies verbatim).
fn is_identifier_start(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// The identifier at the start of `s` (letters, digits, `_`, `$`; not starting with a digit).
fn identifier_prefix(s: &str) -> &str {
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        return "";
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(s.len());
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_hdl::prelude::*;

    /// A counter with a flip-flop submodule: enough to make rust-hdl emit `top` and `top$...`.
    #[derive(LogicBlock, Default)]
    struct TinyCounter {
        pub clock: Signal<In, Clock>,
        pub enable: Signal<In, Bit>,
        pub count: Signal<Out, Bits<8>>,
        top: DFF<Bits<8>>,
    }

    impl Logic for TinyCounter {
        #[hdl_gen]
        fn update(&mut self) {
            dff_setup!(self, clock, top);
            if self.enable.val() {
                self.top.d.next = self.top.q.val() + 1;
            }
            self.count.next = self.top.q.val();
        }
    }

    #[test]
    fn every_module_is_renamed_and_signals_are_not() {
        let mut tiny = TinyCounter::default();
        let v = verilog_of(&mut tiny, "tiny_counter").expect("tiny counter emits");
        let modules: Vec<&str> = v
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("module "))
            .map(identifier_prefix)
            .collect();
        assert!(modules.contains(&"tiny_counter"), "{v}");
        assert!(
            modules.iter().any(|m| m.starts_with("tiny_counter$")),
            "{v}"
        );
        assert!(modules.iter().all(|m| m.starts_with("tiny_counter")), "{v}");
        // The flip-flop field is itself named `top`: its stubs (`top$d`, `top$q`) are signal
        // names, not module names, and must survive the rename.
        assert!(v.contains("top$q"), "{v}");
        assert!(!v.contains("module top"), "{v}");
        // Every instantiated module is one that is defined.
        let inst = "tiny_counter$top top(".to_string();
        assert!(v.contains(&inst), "{v}");
    }

    #[test]
    fn numbers_with_letters_are_copied_verbatim() {
        let v = "module top(a);\nassign a = 32'h0top1 + 8'd3;\nendmodule // top\n";
        let r = rename_top_module(v, "x").expect("has top");
        assert_eq!(
            r,
            "module x(a);\nassign a = 32'h0top1 + 8'd3;\nendmodule // x\n"
        );
    }

    #[test]
    fn text_without_top_is_refused() {
        assert!(rename_top_module("module other(a);\nendmodule\n", "x").is_none());
    }
}
