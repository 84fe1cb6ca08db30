//! Parsing the lines of NVBit's `mem_trace` output (the format is described in
//! `nvbit.rs` and `docs/trace-formats-external.md`). Errors say what was expected; the
//! caller adds the file and line number.

use super::lines::{dec, dim3, hex};
use super::LineError;

/// The prefix of every line the tool prints.
pub(crate) const PREFIX: &str = "MEMTRACE:";

/// A parsed access line; the active lanes' addresses go to the caller's buffer.
#[derive(Debug, PartialEq)]
pub(crate) struct Access<'a> {
    pub ctx: u64,
    pub launch: u64,
    pub cta: [u64; 3],
    pub warp: u64,
    pub opcode: &'a str,
}

/// A parsed launch line.
#[derive(Debug, PartialEq)]
pub(crate) struct Launch {
    pub ctx: u64,
    pub launch: u64,
    pub name: String,
    pub grid: [u64; 3],
    pub block: [u64; 3],
}

#[derive(Debug, PartialEq)]
pub(crate) enum Line<'a> {
    Access(Access<'a>),
    Launch(Launch),
    /// Not a line of the tool's trace (or one of its verbose messages).
    Other,
}

const ACCESS: &str =
    "MEMTRACE: CTX 0xC - grid_launch_id N - CTA X,Y,Z - warp W - OPCODE - ADDR x32";
const LAUNCH: &str =
    "MEMTRACE: CTX 0xC - LAUNCH - Kernel pc 0xP - Kernel name NAME - grid launch id N - grid size X,Y,Z - block size X,Y,Z - …";

/// Parse one line, leaving an access's active (non-zero) lane addresses in `addrs`.
pub(crate) fn parse<'a>(line: &'a str, addrs: &mut Vec<u64>) -> Result<Line<'a>, LineError> {
    let Some(rest) = line.trim().strip_prefix(PREFIX) else {
        return Ok(Line::Other);
    };
    let rest = rest.trim_start();
    if rest.contains(" - LAUNCH") {
        return parse_launch(rest).map(Line::Launch);
    }
    if !rest.contains("grid_launch_id") {
        return Ok(Line::Other);
    }
    let parts: Vec<&str> = rest.splitn(6, " - ").collect();
    if parts.len() < 6 {
        return Err(LineError::Form { form: ACCESS });
    }
    fn key<'s>(p: &'s str, k: &str) -> Result<&'s str, LineError> {
        p.strip_prefix(k)
            .map(str::trim)
            .ok_or_else(|| LineError::expected(format!("`{k} …` in `{ACCESS}`"), p))
    }
    let access = Access {
        ctx: context(parts[0], ACCESS)?,
        launch: dec(key(parts[1], "grid_launch_id")?, "the grid launch id")?,
        cta: dim3(key(parts[2], "CTA")?, "the CTA")?,
        warp: dec(key(parts[3], "warp")?, "the warp")?,
        opcode: parts[4].trim(),
    };
    addrs.clear();
    let mut lanes = 0;
    for tok in parts[5].split_whitespace() {
        lanes += 1;
        let a = hex(tok, "a lane address")?;
        // The tool prints 0x0 for a lane that is not active.
        if a != 0 {
            addrs.push(a);
        }
    }
    if lanes != 32 {
        return Err(LineError::rule(format!(
            "expected 32 lane addresses, found {lanes}"
        )));
    }
    Ok(Line::Access(access))
}

/// The context of `CTX 0xC`, the first field of a line of shape `form`.
fn context(p: &str, form: &'static str) -> Result<u64, LineError> {
    let c = p.strip_prefix("CTX ").ok_or(LineError::Form { form })?;
    hex(c.trim(), "the context")
}

/// A launch line, after the prefix.
fn parse_launch(rest: &str) -> Result<Launch, LineError> {
    let c = context(rest.split(" - ").next().unwrap_or(""), LAUNCH)?;
    let bad = || LineError::Form { form: LAUNCH };
    let name_at = rest.find("Kernel name ").ok_or_else(bad)? + "Kernel name ".len();
    let name_end = rest[name_at..].find(" - grid launch id ").ok_or_else(bad)? + name_at;
    let after = &rest[name_end..];
    let field = |key: &str| {
        let at = after.find(key).ok_or_else(bad)? + key.len();
        Ok::<&str, LineError>(after[at..].split(" - ").next().unwrap_or("").trim())
    };
    Ok(Launch {
        ctx: c,
        launch: dec(field(" - grid launch id ")?, "the grid launch id")?,
        name: rest[name_at..name_end].trim().to_string(),
        grid: dim3(field(" - grid size ")?, "the grid size")?,
        block: dim3(field(" - block size ")?, "the block size")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_and_launch_lines() {
        let mut a = Vec::new();
        let mut line = String::from("MEMTRACE: CTX 0x000000000000abcd - grid_launch_id 2 - CTA 1,0,0 - warp 5 - LDG.E.64 - ");
        line.push_str("0x0000000000001000 0x0000000000000000 0x0000000000001010 ");
        line.push_str(&"0x0000000000000000 ".repeat(29));
        let l = parse(&line, &mut a).unwrap();
        assert_eq!(
            l,
            Line::Access(Access {
                ctx: 0xabcd,
                launch: 2,
                cta: [1, 0, 0],
                warp: 5,
                opcode: "LDG.E.64"
            })
        );
        assert_eq!(a, [0x1000, 0x1010]);
        let l = parse("MEMTRACE: CTX 0x1 - LAUNCH - Kernel pc 0x2 - Kernel name f(int*, float) - grid launch id 0 - grid size 4,1,1 - block size 64,1,1 - nregs 8 - shmem 0 - cuda stream id 0", &mut a).unwrap();
        assert_eq!(
            l,
            Line::Launch(Launch {
                ctx: 1,
                launch: 0,
                name: "f(int*, float)".into(),
                grid: [4, 1, 1],
                block: [64, 1, 1]
            })
        );
        assert_eq!(parse("Hello from the app", &mut a), Ok(Line::Other));
        assert_eq!(
            parse("MEMTRACE: STARTING CONTEXT 0x1", &mut a),
            Ok(Line::Other)
        );
        let e = parse(
            "MEMTRACE: CTX 0x1 - grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E - 0x10",
            &mut a,
        );
        assert!(e.unwrap_err().to_string().contains("32 lane addresses"));
    }
}
