//! Parsing the lines of an Accel-Sim trace: `kernelslist.g` commands, kernel-file header
//! lines and instruction lines. Errors are messages saying what was expected; the caller
//! adds the file and line number. The syntax is described in
//! `docs/trace-formats-external.md`.

use super::lines::{dec, dim3, hex};
use super::opcode::global_access;
use super::regions::Declared;

/// One `kernelslist.g` line.
#[derive(Debug, PartialEq)]
pub(crate) enum Command {
    /// A kernel launch: the trace file, relative to the list's directory.
    Kernel(String),
    /// `MemcpyHtoD` or `cudaMalloc*`: a buffer.
    Buffer(Declared),
    /// Another copy direction: nothing to learn from it.
    Ignored,
}

const COMMANDS: &str =
    "expected `kernel-N.traceg[.xz]`, `MemcpyHtoD,0xADDR,BYTES` or `cudaMalloc,0xADDR,BYTES[,NAME]`";

/// Parse a non-blank, non-comment `kernelslist.g` line.
pub(crate) fn command(line: &str) -> Result<Command, String> {
    if line.starts_with("kernel") {
        if line.contains(char::is_whitespace) {
            return Err(format!("{COMMANDS}, found `{line}`"));
        }
        return Ok(Command::Kernel(line.to_string()));
    }
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let malloc = matches!(fields[0], "cudaMalloc" | "cudaMallocManaged");
    if !malloc && fields[0] != "MemcpyHtoD" {
        return if fields[0].starts_with("Memcpy") {
            Ok(Command::Ignored)
        } else {
            Err(format!("{COMMANDS}, found `{line}`"))
        };
    }
    let max = if malloc { 4 } else { 3 };
    if fields.len() < 3 || fields.len() > max {
        return Err(format!("{COMMANDS}, found `{line}`"));
    }
    let base = hex(fields[1], "a device address")?;
    let bytes = dec(fields[2], "a byte count")?;
    if base.checked_add(bytes).is_none() {
        return Err(format!(
            "buffer {base:#x} + {bytes} bytes overflows the address space"
        ));
    }
    let name = match fields.get(3) {
        Some(n) if n.is_empty() || n.contains(char::is_whitespace) => {
            return Err(format!(
                "expected an allocation name without spaces, found `{n}`"
            ))
        }
        n => n.map(|n| n.to_string()),
    };
    Ok(Command::Buffer(Declared {
        base,
        bytes,
        malloc,
        name,
    }))
}

/// What a kernel file's header says.
#[derive(Debug, Default, Clone)]
pub(crate) struct Header {
    pub name: Option<String>,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    /// `-accelsim tracer version`: below 3, instruction lines start with the thread block
    /// and warp ids.
    pub version: Option<u32>,
    /// `-enable lineinfo = 1`: instruction lines start with a source line number.
    pub lineinfo: bool,
}

impl Header {
    /// Read one `-key = value` line. Keys this reader has no use for (shmem, nregs, stream,
    /// binary and nvbit versions, base addresses) are accepted and ignored.
    pub fn line(&mut self, line: &str) -> Result<(), String> {
        let body = &line[1..];
        let (key, value) = body
            .split_once('=')
            .ok_or_else(|| format!("expected a header line `-key = value`, found `{line}`"))?;
        let (key, value) = (key.trim(), value.trim());
        match key {
            "kernel name" => self.name = (!value.is_empty()).then(|| value.to_string()),
            "grid dim" => {
                self.grid = Some(positive(dim3(value, "the grid dimensions")?, "grid dim")?)
            }
            "block dim" => {
                self.block = Some(positive(dim3(value, "the block dimensions")?, "block dim")?)
            }
            "accelsim tracer version" => {
                self.version = Some(
                    dec(value, "the tracer version")?
                        .try_into()
                        .map_err(|_| format!("tracer version `{value}` is too large"))?,
                )
            }
            "enable lineinfo" => self.lineinfo = dec(value, "0 or 1")? != 0,
            _ => {}
        }
        Ok(())
    }
}

fn positive(v: [u64; 3], what: &str) -> Result<[u64; 3], String> {
    if v.contains(&0) {
        return Err(format!(
            "{what} ({},{},{}) has a zero dimension",
            v[0], v[1], v[2]
        ));
    }
    Ok(v)
}

/// One instruction line, as far as mcmvm cares.
#[derive(Debug, PartialEq)]
pub(crate) enum Inst {
    /// Anything that is not a global-memory access with an active lane.
    Compute,
    /// A global access; its active lanes' addresses are in the caller's buffer, in lane
    /// order. `stride` when the line gave them as base + non-negative stride.
    Mem {
        write: bool,
        elem: u8,
        stride: Option<u64>,
    },
}

/// Parse an instruction line of a tracer-`version` file, leaving a memory instruction's
/// addresses in `addrs`. Fields after the addresses (immediates, store data of newer
/// tracers) are ignored.
pub(crate) fn inst(
    line: &str,
    version: u32,
    lineinfo: bool,
    addrs: &mut Vec<u64>,
) -> Result<Inst, String> {
    let mut toks = line.split_whitespace();
    let mut next = |what: &str| {
        toks.next()
            .ok_or_else(|| format!("instruction line ends early: expected {what}"))
    };
    if version < 3 {
        for what in [
            "threadblock_x",
            "threadblock_y",
            "threadblock_z",
            "warpid_tb",
        ] {
            dec(next(what)?, what)?;
        }
    }
    if lineinfo {
        dec(next("the source line number")?, "the source line number")?;
    }
    hex(next("the PC")?, "the PC")?;
    let mask = hex(next("the active mask")?, "the active mask")?;
    let mask =
        u32::try_from(mask).map_err(|_| format!("active mask {mask:#x} is wider than 32 lanes"))?;
    let dests = dec(next("dest_num")?, "dest_num")?;
    for _ in 0..dests.min(64) {
        next("a destination register")?;
    }
    let opcode = next("the opcode")?;
    let srcs = dec(next("src_num")?, "src_num")?;
    for _ in 0..srcs.min(64) {
        next("a source register")?;
    }
    if dests > 64 || srcs > 64 {
        return Err(format!(
            "{dests} destination / {srcs} source registers is implausible"
        ));
    }
    // Only global accesses are parsed further: other instructions may carry fields this
    // reader need not know (GMMA flags, TMA descriptors).
    let Some(write) = global_access(opcode) else {
        return Ok(Inst::Compute);
    };
    let width = dec(next("mem_width")?, "mem_width")?;
    if width == 0 || mask == 0 {
        return Ok(Inst::Compute);
    }
    if width > 128 {
        return Err(format!("mem_width {width} is larger than 128 bytes"));
    }
    let elem = width as u8;
    let lanes = mask.count_ones() as usize;
    addrs.clear();
    let mode = dec(
        next("the address compression mode")?,
        "the address compression mode",
    )?;
    let mut stride = None;
    match mode {
        0 => {
            for _ in 0..lanes {
                addrs.push(hex(next("one address per active lane")?, "an address")?);
            }
        }
        1 => {
            let base = hex(next("the base address")?, "the base address")? as i128;
            let step = signed(next("the stride")?, "the stride")? as i128;
            for k in 0..lanes as i128 {
                addrs.push(address(base + k * step)?);
            }
            stride = u64::try_from(step).ok();
        }
        2 => {
            let mut a = hex(next("the base address")?, "the base address")? as i128;
            addrs.push(address(a)?);
            for _ in 1..lanes {
                a += signed(next("one delta per further active lane")?, "a delta")? as i128;
                addrs.push(address(a)?);
            }
        }
        m => {
            return Err(format!(
                "unknown address compression mode {m}: expected 0 (list), 1 (base stride) or 2 (base deltas)"
            ))
        }
    }
    if let Some(&a) = addrs
        .iter()
        .find(|&&a| a.checked_add(elem as u64).is_none())
    {
        return Err(format!(
            "access at {a:#x} runs past the end of the address space"
        ));
    }
    Ok(Inst::Mem {
        write,
        elem,
        stride,
    })
}

fn signed(tok: &str, what: &str) -> Result<i64, String> {
    tok.parse::<i64>()
        .map_err(|_| format!("expected {what} (a decimal integer), found `{tok}`"))
}

fn address(a: i128) -> Result<u64, String> {
    u64::try_from(a).map_err(|_| format!("address {a} is outside the 64-bit address space"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_address_modes() {
        let mut a = Vec::new();
        let i = inst(
            "0010 0000000f 1 R2 LDG.E 1 R4 4 1 0x1000 8",
            4,
            false,
            &mut a,
        )
        .unwrap();
        assert_eq!(
            i,
            Inst::Mem {
                write: false,
                elem: 4,
                stride: Some(8)
            }
        );
        assert_eq!(a, [0x1000, 0x1008, 0x1010, 0x1018]);
        let i = inst(
            "0010 00000005 0 STG.E.64 2 R4 R6 8 2 0x1000 -8 imm",
            4,
            false,
            &mut a,
        );
        assert_eq!(
            i.unwrap(),
            Inst::Mem {
                write: true,
                elem: 8,
                stride: None
            }
        );
        assert_eq!(a, [0x1000, 0xff8]);
        let i = inst(
            "0 0 0 3 0010 00000003 0 STG.E 1 R4 4 0 0x20 0x10",
            2,
            false,
            &mut a,
        );
        assert_eq!(
            i.unwrap(),
            Inst::Mem {
                write: true,
                elem: 4,
                stride: None
            }
        );
        assert_eq!(a, [0x20, 0x10]);
        let i = inst(
            "17 0010 ffffffff 1 R2 LDS.U.128 1 R4 16 1 0x0 16",
            4,
            true,
            &mut a,
        );
        assert_eq!(i.unwrap(), Inst::Compute);
        assert_eq!(
            inst("0020 ffffffff 1 R1 IMAD 2 R2 R3 0", 4, false, &mut a),
            Ok(Inst::Compute)
        );
        let e = inst("0010 00000003 0 STG.E 1 R4 4 0 0x20", 4, false, &mut a).unwrap_err();
        assert!(e.contains("one address per active lane"), "{e}");
        let e = inst("0010 00000003 0 STG.E 1 R4 4 7 0x20", 4, false, &mut a).unwrap_err();
        assert!(e.contains("compression mode 7"), "{e}");
    }

    #[test]
    fn commands() {
        assert_eq!(
            command("kernel-1.traceg.xz"),
            Ok(Command::Kernel("kernel-1.traceg.xz".into()))
        );
        assert_eq!(command("MemcpyDtoH,0x10,4"), Ok(Command::Ignored));
        match command("cudaMalloc,0x7f0000000000,4096,A").unwrap() {
            Command::Buffer(d) => assert!(d.malloc && d.name.as_deref() == Some("A")),
            c => panic!("{c:?}"),
        }
        assert!(command("MemcpyHtoD,0x10").is_err());
        assert!(command("launch foo").is_err());
    }
}
