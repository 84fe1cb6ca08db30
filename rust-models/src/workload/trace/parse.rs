//! Parsing one trace line. Every error says what was expected; the caller adds the file
//! and line number.

use super::super::{Allocation, Kernel, LaneOffsets, Lanes, WarpInstr, WARP_LANES};
use super::LineError;
use std::collections::HashMap;

/// A parsed, validated line.
#[derive(Debug, PartialEq)]
pub(crate) enum Record {
    Header(u32),
    Name(String),
    Alloc(Allocation),
    Kernel(Kernel),
    /// (kernel, tb, warp) and the instruction.
    Access((u32, u32, u32), WarpInstr),
}

/// What the parser needs to know to validate an access record.
pub(crate) struct Context<'a> {
    pub allocations: &'a [Allocation],
    pub alloc_index: &'a HashMap<String, u16>,
    pub kernels: &'a [Kernel],
}

/// Parse a decimal or `0x` hexadecimal unsigned integer.
fn num(tok: &str, what: &str) -> Result<u64, LineError> {
    let parsed = match tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => tok.parse::<u64>(),
    };
    parsed.map_err(|_| LineError::expected(format!("{what} (an unsigned integer)"), tok))
}

fn num_max(tok: &str, what: &'static str, max: u64) -> Result<u64, LineError> {
    let value = num(tok, what)?;
    if value > max {
        return Err(LineError::TooLarge { what, value, max });
    }
    Ok(value)
}

/// Parse one line with comments already stripped and known not to be blank.
pub(crate) fn parse_line(line: &str, ctx: &Context<'_>) -> Result<Record, LineError> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let need = |n: usize, form: &str| {
        if toks.len() < n {
            Err(LineError::too_few_fields(form))
        } else {
            Ok(())
        }
    };
    match toks[0] {
        super::HEADER => {
            need(2, "mcmvm-trace VERSION")?;
            Ok(Record::Header(
                num_max(toks[1], "version", u32::MAX as u64)? as u32,
            ))
        }
        "name" => {
            need(2, "name NAME")?;
            if let Some(extra) = toks.get(2) {
                return Err(LineError::rule(format!(
                    "unexpected field `{extra}`: expected `name NAME`"
                )));
            }
            Ok(Record::Name(toks[1].to_string()))
        }
        "alloc" => parse_alloc(&toks),
        "kernel" => {
            const FORM: &str = "kernel NAME GRID WARPS_PER_TB";
            need(4, FORM)?;
            if toks.len() > 4 {
                return Err(LineError::rule(format!(
                    "unexpected field `{}`: expected `{FORM}`",
                    toks[4]
                )));
            }
            let grid = num_max(toks[2], "grid", u32::MAX as u64)? as u32;
            let warps = num_max(toks[3], "warps per thread block", 32)? as u32;
            if grid == 0 || warps == 0 {
                return Err(LineError::rule(
                    "grid and warps per thread block must be at least 1",
                ));
            }
            Ok(Record::Kernel(Kernel::new(toks[1], grid, warps)))
        }
        "a" => parse_access(&toks, ctx),
        other => Err(LineError::rule(format!(
            "unknown record `{other}`: expected `alloc`, `kernel`, `a` or `name`"
        ))),
    }
}

fn parse_alloc(toks: &[&str]) -> Result<Record, LineError> {
    const FORM: &str = "alloc NAME BYTES [stride=PAGES] [preferred-gpu] [group=N]";
    if toks.len() < 3 {
        return Err(LineError::too_few_fields(FORM));
    }
    let bytes = num(toks[2], "allocation size in bytes")?;
    if bytes == 0 {
        return Err(LineError::rule("allocation size must be at least 1 byte"));
    }
    let mut a = Allocation::new(toks[1], bytes);
    for flag in &toks[3..] {
        if let Some(v) = flag.strip_prefix("stride=") {
            a.stride_hint = Some(num(v, "stride hint in pages")?);
        } else if let Some(v) = flag.strip_prefix("group=") {
            a.similarity_group = Some(num_max(v, "similarity group", u32::MAX as u64)? as u32);
        } else if *flag == "preferred-gpu" {
            a.preferred_gpu = true;
        } else {
            return Err(LineError::rule(format!(
                "unknown allocation flag `{flag}`: expected stride=PAGES, preferred-gpu or group=N"
            )));
        }
    }
    Ok(Record::Alloc(a))
}

const ACCESS_FORM: &str = "a KERNEL TB WARP ALLOC r|w s OFFSET STRIDE LANES ELEM [c=CYCLES]` or `a KERNEL TB WARP ALLOC r|w g ELEM OFF,OFF,... [c=CYCLES]";

/// An access record, in the steps of its fields: 1. the warp, 2. the allocation and
/// direction, 3. the lanes, 4. the trailing flags, 5. the lanes' extent against the
/// allocation.
fn parse_access(toks: &[&str], ctx: &Context<'_>) -> Result<Record, LineError> {
    if toks.len() < 8 {
        return Err(LineError::too_few_fields(ACCESS_FORM));
    }
    // 1. The warp, inside its kernel's launch.
    let key = access_warp(toks, ctx)?;
    // 2. The allocation and direction.
    let alloc = *ctx.alloc_index.get(toks[4]).ok_or_else(|| {
        LineError::rule(format!(
            "unknown allocation `{}` (declare it with an `alloc` record first)",
            toks[4]
        ))
    })?;
    let write = match toks[5] {
        "r" | "R" => false,
        "w" | "W" => true,
        t => return Err(LineError::expected("r or w", t)),
    };
    // 3. The lanes, and 4. what may follow them.
    let (lanes, rest) = access_lanes(toks)?;
    let (compute_cycles, independent) = access_flags(rest)?;
    // 5. Every lane inside the allocation.
    let size = ctx.allocations[alloc as usize].bytes;
    if let Some((lo, hi)) = lanes.extent() {
        if hi > size {
            return Err(LineError::rule(format!(
                "access [{lo:#x}, {hi:#x}) lies outside allocation `{}` of {size} bytes",
                toks[4]
            )));
        }
    }
    let instr = WarpInstr {
        alloc,
        write,
        lanes,
        compute_cycles,
        independent,
    };
    Ok(Record::Access(key, instr))
}

/// An access record's (kernel, thread block, warp), each inside the declared launch.
fn access_warp(toks: &[&str], ctx: &Context<'_>) -> Result<(u32, u32, u32), LineError> {
    let kernel = num(toks[1], "kernel index")?;
    let k = ctx.kernels.get(kernel as usize).ok_or_else(|| {
        LineError::rule(format!(
            "kernel index {kernel} is not declared ({} kernel records so far)",
            ctx.kernels.len()
        ))
    })?;
    let tb = num(toks[2], "thread block")?;
    if tb >= k.grid as u64 {
        return Err(LineError::rule(format!(
            "thread block {tb} is outside kernel {kernel}'s grid of {}",
            k.grid
        )));
    }
    let warp = num(toks[3], "warp")?;
    if warp >= k.warps_per_tb as u64 {
        return Err(LineError::rule(format!(
            "warp {warp} is outside kernel {kernel}'s {} warps per thread block",
            k.warps_per_tb
        )));
    }
    Ok((kernel as u32, tb as u32, warp as u32))
}

/// An access record's lanes (`s` strided or `g` gather), and the fields after them.
fn access_lanes<'t>(toks: &'t [&'t str]) -> Result<(Lanes, &'t [&'t str]), LineError> {
    match toks[6] {
        "s" => {
            if toks.len() < 11 {
                return Err(LineError::Short {
                    what: "too few fields for a strided access",
                    expected: format!("`{ACCESS_FORM}`"),
                });
            }
            let lanes = num_max(toks[9], "lane count", 32)?;
            if lanes == 0 {
                return Err(LineError::rule("lane count must be 1..=32"));
            }
            let l = Lanes::Strided {
                offset: num(toks[7], "offset")?,
                stride: num(toks[8], "stride")?,
                lanes: lanes as u8,
                elem: elem(toks[10])?,
            };
            Ok((l, &toks[11..]))
        }
        "g" => {
            let e = elem(toks[7])?;
            let list = toks.get(8).ok_or_else(|| LineError::Short {
                what: "missing offset list",
                expected: format!("`{ACCESS_FORM}`"),
            })?;
            let offsets = list
                .split(',')
                .map(|t| num(t, "lane offset"))
                .collect::<Result<Vec<u64>, LineError>>()?;
            let lanes = match LaneOffsets::new(&offsets) {
                Some(l) if !offsets.is_empty() => l,
                _ => {
                    return Err(LineError::rule(format!(
                        "a gather has 1..={WARP_LANES} lane offsets, found {}",
                        offsets.len()
                    )))
                }
            };
            let l = Lanes::Gather {
                offsets: lanes,
                elem: e,
            };
            Ok((l, &toks[9..]))
        }
        t => Err(LineError::expected(
            "lane form `s` (strided) or `g` (gather)",
            t,
        )),
    }
}

/// The `c=CYCLES` and `indep` flags that may follow an access's lanes.
fn access_flags(rest: &[&str]) -> Result<(u32, bool), LineError> {
    let (mut compute_cycles, mut independent) = (0, false);
    for t in rest {
        match t.strip_prefix("c=") {
            Some(v) => compute_cycles = num_max(v, "compute cycles", u32::MAX as u64)? as u32,
            None if *t == "indep" => independent = true,
            None => {
                return Err(LineError::rule(format!(
                    "unexpected field `{t}`: only `c=CYCLES` and `indep` may follow the lanes"
                )))
            }
        }
    }
    Ok((compute_cycles, independent))
}

fn elem(tok: &str) -> Result<u8, LineError> {
    let e = num_max(tok, "element size in bytes", 128)?;
    if e == 0 {
        return Err(LineError::rule("element size must be 1..=128 bytes"));
    }
    Ok(e as u8)
}

/// The part of a line before any `#` comment, trimmed.
pub(crate) fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("").trim()
}
