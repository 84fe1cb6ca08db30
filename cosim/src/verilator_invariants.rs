//! Invariants of the blocks' own registers, checked every cycle inside the Verilator model.
//!
//! The lockstep and the reference monitors only see ports: a table that has quietly lost a
//! row, or two rows that claim one allocation, shows at the ports only when (and if) a later
//! request hits the damage. These checks read the emitted module's registers through
//! hierarchical references from the Verilator harness (`dut.<register>$q`), so they see the
//! state itself after every rising edge. Each invariant is one Verilog expression that must
//! be true; the harness drives one bit of `mcmvm_invariant_failed` per invariant with its
//! negation, and the shim hands that word to [`crate::verilator::VerilatorModel`] with the
//! outputs.
//!
//! The invariants are the blocks' READMEs' (`rtl/src/*.md`) statements about their state,
//! not the twin's code. The register names and widths are read from the emitted Verilog
//! itself, so a restructured RTL that no longer has a register an invariant reads is an
//! error naming it, never a check that silently passes.

use crate::error::CosimError;
use mcmvm_models::config::{HwConfig, RtReplacement};
use mcmvm_models::protocol::BlockKind;

/// One invariant: a name for reports and a Verilog expression over `dut.*` that is true
/// in every reachable state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invariant {
    pub name: String,
    pub holds: String,
    /// Only where the driver keeps its side of the contract (a system run): e.g. the ATT
    /// allows overlapping ranges, which random stimulus registers, but a driver registers
    /// disjoint objects.
    pub system_only: bool,
}

/// The width of register `name` (`wire [w-1:0] name$q;` in the emitted module).
fn width(verilog: &str, module: &str, name: &str) -> Result<u32, CosimError> {
    let wanted = format!("{name}$q;");
    for line in verilog.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("wire") else {
            continue;
        };
        let rest = rest.trim();
        if rest == wanted {
            return Ok(1);
        }
        if let Some(range) = rest.strip_prefix('[') {
            if let Some((bits, tail)) = range.split_once(']') {
                if tail.trim() == wanted {
                    let msb = bits
                        .split(':')
                        .next()
                        .and_then(|m| m.trim().parse::<u32>().ok());
                    if let Some(msb) = msb {
                        return Ok(msb + 1);
                    }
                }
            }
        }
    }
    Err(CosimError::Invariants(format!(
        "{module}: the state invariants read register `{name}`, which the emitted Verilog no \
         longer declares (update cosim/src/verilator_invariants.rs with the RTL)"
    )))
}

/// `dut.<name>$q`.
fn q(name: &str) -> String {
    format!("dut.{name}$q")
}

/// Every pair `i < j` below `n`.
fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |i| (i + 1..n).map(move |j| (i, j)))
}

/// A conjunction; `1'b1` when empty.
fn all(terms: Vec<String>) -> String {
    if terms.is_empty() {
        "1'b1".to_string()
    } else {
        terms.join(" && ")
    }
}

/// The sum of the one-bit `bits`, `w` bits wide, written so no operand is widened
/// implicitly (WIDTH-clean).
fn count(bits: &[String], w: u32) -> String {
    bits.iter()
        .map(|b| format!("{{{}'d0, {b}}}", w - 1))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// A `w`-bit unsigned literal.
fn lit(w: u32, v: u64) -> String {
    format!("{w}'d{v}")
}

/// Bits needed to hold `0..=n`.
fn bits_for(n: u64) -> u32 {
    (64 - n.leading_zeros()).max(1)
}

/// The invariants of `kind` under `cfg`, against its emitted `verilog`.
pub fn invariants(
    kind: BlockKind,
    cfg: &HwConfig,
    verilog: &str,
) -> Result<Vec<Invariant>, CosimError> {
    match kind {
        BlockKind::RemoteTracker => remote_tracker(cfg, verilog),
        BlockKind::AccessTimeTracker => access_time_tracker(cfg, verilog),
        // The coalescer's only state is its output registers (none without them): its
        // README states nothing about state that its ports do not show.
        BlockKind::TlbCoalescer => Ok(Vec::new()),
    }
}

fn remote_tracker(cfg: &HwConfig, verilog: &str) -> Result<Vec<Invariant>, CosimError> {
    let m = "remote_tracker";
    let rt = &cfg.remote_tracker;
    let n = rt.entries;
    // Every register an invariant reads must exist (an error names a missing one).
    for field in ["alloc_id", "remote", "valid"] {
        width(verilog, m, &rt_row(field, 0))?;
    }
    let cnt_w = width(verilog, m, &rt_row("access", 0))?;
    let max = if rt.counter_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << rt.counter_bits) - 1
    };
    let mut out = vec![rt_unique_ids(n)];
    match rt.replacement {
        RtReplacement::Ranks => out.push(rank_permutation(n, verilog)?),
        RtReplacement::Nru => out.push(nru_clear_bit(n, verilog)?),
        // Every value of the 31 tree bits is a legal state (README, "Replacement orders"):
        // there is nothing to state about them.
        RtReplacement::TreePlru => {}
    }
    if cnt_w < 64 && max < (1u64 << cnt_w) - 1 {
        out.push(rt_saturation(n, cnt_w, max));
    }
    out.push(rt_remote_within_walks(n));
    Ok(out)
}

/// Register `field` of RT row `i`, as the emitted Verilog names it.
fn rt_row(field: &str, i: usize) -> String {
    format!("{field}${i}")
}

/// Whether RT row `i` is valid, as an expression.
fn rt_valid(i: usize) -> String {
    q(&rt_row("valid", i))
}

fn rt_unique_ids(n: usize) -> Invariant {
    Invariant {
        name: "rt: no two valid rows hold one allocation ID".into(),
        holds: all(pairs(n)
            .map(|(i, j)| {
                format!(
                    "!({} && {} && {} == {})",
                    rt_valid(i),
                    rt_valid(j),
                    q(&rt_row("alloc_id", i)),
                    q(&rt_row("alloc_id", j))
                )
            })
            .collect()),
        system_only: false,
    }
}

/// Counters of `cnt_w` bits that saturate at `max`, below what the width holds.
fn rt_saturation(n: usize, cnt_w: u32, max: u64) -> Invariant {
    Invariant {
        name: format!("rt: no counter of a valid row exceeds the saturation value {max}"),
        holds: all((0..n)
            .map(|i| {
                format!(
                    "(!{} || ({} <= {} && {} <= {}))",
                    rt_valid(i),
                    q(&rt_row("access", i)),
                    lit(cnt_w, max),
                    q(&rt_row("remote", i)),
                    lit(cnt_w, max)
                )
            })
            .collect()),
        system_only: false,
    }
}

fn rt_remote_within_walks(n: usize) -> Invariant {
    Invariant {
        name: "rt: a valid row counts no more remote walks than walks".into(),
        holds: all((0..n)
            .map(|i| {
                format!(
                    "(!{} || {} <= {})",
                    rt_valid(i),
                    q(&rt_row("remote", i)),
                    q(&rt_row("access", i))
                )
            })
            .collect()),
        system_only: false,
    }
}

/// `ranks`: the valid rows' ranks are a permutation of 0..valid rows (README, State).
fn rank_permutation(n: usize, verilog: &str) -> Result<Invariant, CosimError> {
    let m = "remote_tracker";
    let row = |field: &str, i: usize| format!("{field}${i}");
    let valid = |i: usize| q(&row("valid", i));
    let rank_w = width(verilog, m, &row("rank", 0))?;
    let count_w = bits_for(n as u64).max(rank_w + 1);
    let valid_count = count(&(0..n).map(valid).collect::<Vec<_>>(), count_w);
    // A permutation of 0..valid_count: every valid rank below the count, no two equal.
    let below = (0..n)
        .map(|i| {
            format!(
                "(!{} || {{{}'d0, {}}} < ({valid_count}))",
                valid(i),
                count_w - rank_w,
                q(&row("rank", i))
            )
        })
        .collect::<Vec<_>>();
    let distinct = pairs(n)
        .map(|(i, j)| {
            format!(
                "!({} && {} && {} == {})",
                valid(i),
                valid(j),
                q(&row("rank", i)),
                q(&row("rank", j))
            )
        })
        .collect::<Vec<_>>();
    Ok(Invariant {
        name: "rt: the valid rows' ranks are a permutation of 0..valid rows".into(),
        holds: format!("({}) && ({})", all(below), all(distinct)),
        system_only: false,
    })
}

/// `nru`: a full table of two or more rows has a row whose bit is clear (README,
/// Replacement orders); with one row there is nothing to state.
fn nru_clear_bit(n: usize, verilog: &str) -> Result<Invariant, CosimError> {
    let m = "remote_tracker";
    width(verilog, m, "used$0")?;
    let full = all((0..n).map(|i| q(&format!("valid${i}"))).collect());
    let all_set = all((0..n).map(|i| q(&format!("used${i}"))).collect());
    Ok(Invariant {
        name: "rt: a full table of two or more rows has a not-recently-used bit clear".into(),
        holds: if n >= 2 {
            format!("!(({full}) && ({all_set}))")
        } else {
            "1'b1".into()
        },
        system_only: false,
    })
}

fn access_time_tracker(cfg: &HwConfig, verilog: &str) -> Result<Vec<Invariant>, CosimError> {
    let m = "access_time_tracker";
    let att = &cfg.access_time_tracker;
    let n = att.objects;
    let slot = |field: &str, i: usize| format!("{field}${i}");
    // Every register an invariant reads must exist (an error names a missing one).
    width(verilog, m, "valid")?;
    width(verilog, m, &slot("start_vpn", 0))?;
    width(verilog, m, &slot("end_vpn", 0))?;
    let timer_w = width(verilog, m, &slot("timer", 0))?;
    let valid = |i: usize| format!("{}[{i}]", q("valid"));
    let start = |i: usize| q(&slot("start_vpn", i));
    let end = |i: usize| q(&slot("end_vpn", i));
    let max = if att.timer_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << att.timer_bits) - 1
    };
    let mut out = Vec::new();
    if timer_w < 64 && max < (1u64 << timer_w) - 1 {
        out.push(Invariant {
            name: format!("att: no valid object's timer exceeds its saturation value {max}"),
            holds: all((0..n)
                .map(|i| {
                    format!(
                        "(!{} || {} <= {})",
                        valid(i),
                        q(&slot("timer", i)),
                        lit(timer_w, max)
                    )
                })
                .collect()),
            system_only: false,
        });
    }
    out.push(Invariant {
        name: "att: the valid objects' ranges are disjoint".into(),
        holds: all(pairs(n)
            .map(|(i, j)| {
                format!(
                    "!({vi} && {vj} && {si} <= {ei} && {sj} <= {ej} && {si} <= {ej} && {sj} <= {ei})",
                    vi = valid(i),
                    vj = valid(j),
                    si = start(i),
                    ei = end(i),
                    sj = start(j),
                    ej = end(j)
                )
            })
            .collect()),
        system_only: true,
    });
    out.extend(recency(n, verilog)?);
    Ok(out)
}

/// The ATT's recency among valid objects is a strict total order, in whichever form the
/// RTL keeps it: an age matrix (`newer$i`: the slots touched after slot `i`) or ranks.
fn recency(n: usize, verilog: &str) -> Result<Vec<Invariant>, CosimError> {
    let m = "access_time_tracker";
    if width(verilog, m, "newer$0").is_ok() {
        return Ok(vec![age_matrix_order(n)]);
    }
    // `tree-plru`: every value of the 31 node bits is a legal state (the README's walk
    // reaches a valid slot from any of them), so there is no order to state.
    if width(verilog, m, "tree$0").is_ok() {
        return Ok(Vec::new());
    }
    if let Ok(rank_w) = width(verilog, m, "rank$0") {
        return Ok(vec![rank_permutation_att(n, rank_w)]);
    }
    Err(CosimError::Invariants(format!(
        "{m}: the recency invariant reads an age matrix (`newer$i`), ranks (`rank$i`) or a \
         pseudo-LRU tree (`tree$0`), and the emitted Verilog declares none (update \
         cosim/src/verilator_invariants.rs)"
    )))
}

/// Whether ATT slot `i` is valid, as an expression.
fn att_valid(i: usize) -> String {
    format!("{}[{i}]", q("valid"))
}

/// Age matrix: of two valid slots, exactly one is newer than the other.
fn age_matrix_order(n: usize) -> Invariant {
    let newer = |i: usize, j: usize| format!("{}[{j}]", q(&format!("newer${i}")));
    Invariant {
        name: "att: of two valid objects exactly one was touched more recently (age matrix)".into(),
        holds: all(pairs(n)
            .map(|(i, j)| {
                format!(
                    "(!({} && {}) || ({} != {}))",
                    att_valid(i),
                    att_valid(j),
                    newer(i, j),
                    newer(j, i)
                )
            })
            .collect()),
        system_only: false,
    }
}

/// Ranks of `rank_w` bits: every valid slot's rank is below the number of valid slots,
/// and no two valid slots share one.
fn rank_permutation_att(n: usize, rank_w: u32) -> Invariant {
    let rank = |i: usize| q(&format!("rank${i}"));
    let count_w = bits_for(n as u64).max(rank_w + 1);
    let valid_count = count(&(0..n).map(att_valid).collect::<Vec<_>>(), count_w);
    let below = (0..n).map(|i| {
        format!(
            "(!{} || {{{}'d0, {}}} < ({valid_count}))",
            att_valid(i),
            count_w - rank_w,
            rank(i)
        )
    });
    let distinct = pairs(n).map(|(i, j)| {
        format!(
            "!({} && {} && {} == {})",
            att_valid(i),
            att_valid(j),
            rank(i),
            rank(j)
        )
    });
    Invariant {
        name: "att: the valid objects' recency ranks are a permutation of 0..valid objects".into(),
        holds: format!(
            "({}) && ({})",
            all(below.collect()),
            all(distinct.collect())
        ),
        system_only: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_come_from_the_declarations() {
        let v = "module m();\n    wire  [4:0] rank$3$q;\n    wire  valid$0$q;\nendmodule\n";
        assert_eq!(width(v, "m", "rank$3").ok(), Some(5));
        assert_eq!(width(v, "m", "valid$0").ok(), Some(1));
        let err = width(v, "m", "rank$4").expect_err("not declared");
        assert!(err.to_string().contains("rank$4"), "{err}");
    }

    #[test]
    fn every_block_with_state_gets_its_invariants_from_the_emitted_verilog() {
        let mut exact = HwConfig::default();
        exact.access_time_tracker.recency = mcmvm_models::config::AttRecency::Ranks;
        // (block, configuration, invariants at least): the default ATT's tree has no order
        // invariant, so it keeps only the disjoint ranges (32-bit timers never saturate).
        for (kind, cfg, least) in [
            (BlockKind::RemoteTracker, HwConfig::default(), 2),
            (BlockKind::AccessTimeTracker, HwConfig::default(), 1),
            (BlockKind::AccessTimeTracker, exact, 2),
        ] {
            let verilog = mcmvm_rtl::emit::verilog(kind, &cfg).expect("emit");
            let list = invariants(kind, &cfg, &verilog).unwrap_or_else(|e| panic!("{e}"));
            let names: Vec<&str> = list.iter().map(|i| i.name.as_str()).collect();
            assert!(list.len() >= least, "{kind:?}: {names:?}");
            for inv in &list {
                assert!(inv.holds.contains("dut."), "{}", inv.name);
            }
        }
    }

    #[test]
    fn the_rt_invariants_follow_its_replacement_order() {
        let mut cfg = HwConfig::default();
        cfg.remote_tracker.replacement = RtReplacement::Nru;
        let kind = BlockKind::RemoteTracker;
        let verilog = mcmvm_rtl::emit::verilog(kind, &cfg).expect("emit");
        let list = invariants(kind, &cfg, &verilog).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = list.iter().map(|i| i.name.as_str()).collect();
        assert!(!names.iter().any(|n| n.contains("ranks")), "{names:?}");
        let nru = list.iter().find(|i| i.name.contains("not-recently-used"));
        let nru = nru.unwrap_or_else(|| panic!("no NRU invariant: {names:?}"));
        assert!(nru.holds.contains("dut.used$31$q") && nru.holds.contains("dut.valid$31$q"));
        // The ranks invariant reads rank registers, which the NRU Verilog does not have.
        let err = rank_permutation(32, &verilog).expect_err("no rank registers");
        assert!(err.to_string().contains("rank$0"), "{err}");
    }
}
