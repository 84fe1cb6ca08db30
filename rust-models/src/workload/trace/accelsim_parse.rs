//! Parsing the lines of an Accel-Sim trace: `kernelslist.g` commands, kernel-file header
//! lines and instruction lines. Errors are messages saying what was expected; the caller
//! adds the file and line number. The syntax is described in
//! `docs/trace-formats-external.md`.

use super::lines::{dec, dim3, hex};
use super::opcode::global_access;
use super::regions::Declared;
use super::LineError;

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
    "`kernel-N.traceg[.xz]`, `MemcpyHtoD,0xADDR,BYTES` or `cudaMalloc,0xADDR,BYTES[,NAME]`";

/// Parse a non-blank, non-comment `kernelslist.g` line.
pub(crate) fn command(line: &str) -> Result<Command, LineError> {
    if line.starts_with("kernel") {
        if line.contains(char::is_whitespace) {
            return Err(LineError::expected(COMMANDS, line));
        }
        return Ok(Command::Kernel(line.to_string()));
    }
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let malloc = matches!(fields[0], "cudaMalloc" | "cudaMallocManaged");
    if !malloc && fields[0] != "MemcpyHtoD" {
        return if fields[0].starts_with("Memcpy") {
            Ok(Command::Ignored)
        } else {
            Err(LineError::expected(COMMANDS, line))
        };
    }
    let max = if malloc { 4 } else { 3 };
    if fields.len() < 3 || fields.len() > max {
        return Err(LineError::expected(COMMANDS, line));
    }
    let base = hex(fields[1], "a device address")?;
    let bytes = dec(fields[2], "a byte count")?;
    if base.checked_add(bytes).is_none() {
        return Err(LineError::rule(format!(
            "buffer {base:#x} + {bytes} bytes overflows the address space"
        )));
    }
    let name = match fields.get(3) {
        Some(n) if n.is_empty() || n.contains(char::is_whitespace) => {
            return Err(LineError::expected("an allocation name without spaces", *n))
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
    pub fn line(&mut self, line: &str) -> Result<(), LineError> {
        let body = &line[1..];
        let (key, value) = body
            .split_once('=')
            .ok_or_else(|| LineError::expected("a header line `-key = value`", line))?;
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
                self.version = Some(dec(value, "the tracer version")?.try_into().map_err(|_| {
                    LineError::rule(format!("tracer version `{value}` is too large"))
                })?)
            }
            "enable lineinfo" => self.lineinfo = dec(value, "0 or 1")? != 0,
            _ => {}
        }
        Ok(())
    }
}

fn positive(v: [u64; 3], what: &str) -> Result<[u64; 3], LineError> {
    if v.contains(&0) {
        return Err(LineError::rule(format!(
            "{what} ({},{},{}) has a zero dimension",
            v[0], v[1], v[2]
        )));
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

/// The whitespace-separated fields of an instruction line, taken in order.
struct Fields<'a>(std::str::SplitWhitespace<'a>);

impl<'a> Fields<'a> {
    /// The next field, which the line must still have.
    fn next(&mut self, what: &'static str) -> Result<&'a str, LineError> {
        self.0.next().ok_or(LineError::Short {
            what: "instruction line ends early",
            expected: what.to_string(),
        })
    }
    fn dec(&mut self, what: &'static str) -> Result<u64, LineError> {
        dec(self.next(what)?, what)
    }
    fn hex(&mut self, what: &'static str) -> Result<u64, LineError> {
        hex(self.next(what)?, what)
    }
}

/// Parse an instruction line of a tracer-`version` file, leaving a memory instruction's
/// addresses in `addrs`. Fields after the addresses (immediates, store data of newer
/// tracers) are ignored. In the line's order: 1. the operands up to the opcode, 2. whether
/// it is a global access of some width, 3. its active lanes' addresses.
pub(crate) fn inst(
    line: &str,
    version: u32,
    lineinfo: bool,
    addrs: &mut Vec<u64>,
) -> Result<Inst, LineError> {
    let mut f = Fields(line.split_whitespace());
    // 1. Operands.
    let (mask, opcode) = operands(&mut f, version, lineinfo)?;
    // 2. Only global accesses are parsed further: other instructions may carry fields this
    // reader need not know (GMMA flags, TMA descriptors).
    let Some(write) = global_access(opcode) else {
        return Ok(Inst::Compute);
    };
    let width = f.dec("mem_width")?;
    if width == 0 || mask == 0 {
        return Ok(Inst::Compute);
    }
    if width > 128 {
        return Err(LineError::rule(format!(
            "mem_width {width} is larger than 128 bytes"
        )));
    }
    let elem = width as u8;
    // 3. Addresses.
    let stride = addresses(&mut f, mask.count_ones() as usize, addrs)?;
    if let Some(&a) = addrs
        .iter()
        .find(|&&a| a.checked_add(elem as u64).is_none())
    {
        return Err(LineError::rule(format!(
            "access at {a:#x} runs past the end of the address space"
        )));
    }
    Ok(Inst::Mem {
        write,
        elem,
        stride,
    })
}

/// The fields up to the opcode: the active mask and the opcode.
fn operands<'a>(
    f: &mut Fields<'a>,
    version: u32,
    lineinfo: bool,
) -> Result<(u32, &'a str), LineError> {
    if version < 3 {
        for what in [
            "threadblock_x",
            "threadblock_y",
            "threadblock_z",
            "warpid_tb",
        ] {
            f.dec(what)?;
        }
    }
    if lineinfo {
        f.dec("the source line number")?;
    }
    f.hex("the PC")?;
    let mask = f.hex("the active mask")?;
    let mask = u32::try_from(mask)
        .map_err(|_| LineError::rule(format!("active mask {mask:#x} is wider than 32 lanes")))?;
    let dests = f.dec("dest_num")?;
    for _ in 0..dests.min(64) {
        f.next("a destination register")?;
    }
    let opcode = f.next("the opcode")?;
    let srcs = f.dec("src_num")?;
    for _ in 0..srcs.min(64) {
        f.next("a source register")?;
    }
    if dests > 64 || srcs > 64 {
        return Err(LineError::rule(format!(
            "{dests} destination / {srcs} source registers is implausible"
        )));
    }
    Ok((mask, opcode))
}

/// The `lanes` active lanes' addresses into `addrs`, in one of the three compression modes;
/// the stride when mode 1 gave a non-negative one.
fn addresses(
    f: &mut Fields<'_>,
    lanes: usize,
    addrs: &mut Vec<u64>,
) -> Result<Option<u64>, LineError> {
    addrs.clear();
    let mut stride = None;
    match f.dec("the address compression mode")? {
        0 => {
            for _ in 0..lanes {
                addrs.push(hex(f.next("one address per active lane")?, "an address")?);
            }
        }
        1 => {
            let base = f.hex("the base address")? as i128;
            let step = signed(f.next("the stride")?, "the stride")? as i128;
            for k in 0..lanes as i128 {
                addrs.push(address(base + k * step)?);
            }
            stride = u64::try_from(step).ok();
        }
        2 => {
            let mut a = f.hex("the base address")? as i128;
            addrs.push(address(a)?);
            for _ in 1..lanes {
                a += signed(f.next("one delta per further active lane")?, "a delta")? as i128;
                addrs.push(address(a)?);
            }
        }
        m => {
            return Err(LineError::rule(format!(
                "unknown address compression mode {m}: expected 0 (list), 1 (base stride) or 2 (base deltas)"
            )))
        }
    }
    Ok(stride)
}

fn signed(tok: &str, what: &str) -> Result<i64, LineError> {
    tok.parse::<i64>()
        .map_err(|_| LineError::expected(format!("{what} (a decimal integer)"), tok))
}

fn address(a: i128) -> Result<u64, LineError> {
    u64::try_from(a)
        .map_err(|_| LineError::rule(format!("address {a} is outside the 64-bit address space")))
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
        let e = inst("0010 00000003 0 STG.E 1 R4 4 0 0x20", 4, false, &mut a)
            .unwrap_err()
            .to_string();
        assert!(e.contains("one address per active lane"), "{e}");
        let e = inst("0010 00000003 0 STG.E 1 R4 4 7 0x20", 4, false, &mut a)
            .unwrap_err()
            .to_string();
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
