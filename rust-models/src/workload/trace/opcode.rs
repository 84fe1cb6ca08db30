//! Which SASS opcodes of an external trace are global-memory accesses.
//!
//! mcmvm simulates the virtual memory of global (device) memory only, so shared-memory
//! (`LDS`, `STS`, `LDSM`, `ATOMS`), local-memory (`LDL`, `STL`), constant and texture
//! instructions are not accesses to it: the readers count them as compute instructions.

/// Opcode bases (the part before the first `.`) that access global memory. Generic `LD` /
/// `ST` / `ATOM` / `RED` are counted as global: most generic accesses are, and the trace
/// does not say which window an address falls into. `LDGSTS` (asynchronous copy into shared
/// memory) reads global memory.
const GLOBAL: [&str; 9] = [
    "LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "REDG", "LDGSTS",
];

/// `Some(is_write)` when `opcode` is a global-memory instruction. Atomics and reductions
/// count as writes, as in the mcmvm format.
pub(crate) fn global_access(opcode: &str) -> Option<bool> {
    let base = opcode.split('.').next().unwrap_or("");
    if !GLOBAL.contains(&base) {
        return None;
    }
    Some(base.starts_with("ST") || base.starts_with("ATOM") || base.starts_with("RED"))
}

/// Bytes per lane implied by an opcode's modifiers: `.64` is 8 bytes, `.U8` 1, `.S16` 2,
/// `.F64` 8, `.128` 16; without a size modifier a lane moves 4 bytes. (NVBit's mem_trace prints no
/// access width, only the opcode.)
pub(crate) fn width_from_opcode(opcode: &str) -> u8 {
    for m in opcode.split('.').skip(1) {
        let digits = m
            .strip_prefix('U')
            .or_else(|| m.strip_prefix('S'))
            .or_else(|| m.strip_prefix('F'))
            .unwrap_or(m);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(bits) = digits.parse::<u32>() {
                return (bits / 8).clamp(1, 128) as u8;
            }
        }
    }
    4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_opcodes_and_widths() {
        assert_eq!(global_access("LDG.E.64"), Some(false));
        assert_eq!(global_access("STG.E"), Some(true));
        assert_eq!(global_access("ATOMG.E.ADD.STRONG.GPU"), Some(true));
        assert_eq!(global_access("RED.E.ADD"), Some(true));
        assert_eq!(global_access("LDGSTS.E.BYPASS.128"), Some(false));
        for other in [
            "LDS.U.128",
            "STS",
            "LDL",
            "STL.64",
            "ATOMS.ADD",
            "REDUX",
            "FFMA",
            "LDSM",
        ] {
            assert_eq!(global_access(other), None, "{other}");
        }
        assert_eq!(width_from_opcode("LDG.E.64"), 8);
        assert_eq!(width_from_opcode("LDG.E.128.CONSTANT"), 16);
        assert_eq!(width_from_opcode("STG.E.U8"), 1);
        assert_eq!(width_from_opcode("LDG.E.S16"), 2);
        assert_eq!(width_from_opcode("LDG.E"), 4);
        assert_eq!(width_from_opcode("ATOM.E.ADD.F64.RN"), 8);
    }
}
