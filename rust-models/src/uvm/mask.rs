//! Page masks of one 2 MB VA block: 512 bits, page 0 = least significant bit, as in the
//! driver's `uvm_page_mask_t`. Hex text is the 512-bit number written most significant
//! digit first (so `0x1` is page 0 alone), the form `mcmvm prefetch` reads and prints.

use bitvec::prelude::*;

/// 4 KB pages in a 2 MB VA block.
pub const PAGES_PER_BLOCK: usize = 512;

/// One bit per 4 KB page of a 2 MB VA block.
pub type PageMask = BitArr!(for PAGES_PER_BLOCK, in u64, Lsb0);

/// Why a hex page mask could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MaskError {
    #[error("empty page mask (expected up to 128 hex digits)")]
    Empty,
    #[error("page mask has {0} hex digits; a 2 MB block has 512 pages = at most 128 digits")]
    TooLong(usize),
    #[error("page mask: `{0}` is not a hex digit")]
    BadDigit(char),
}

/// An empty mask.
pub fn empty_mask() -> PageMask {
    BitArray::ZERO
}

/// Parse a 512-bit mask written in hex (optional `0x`, `_` separators allowed).
pub fn parse_hex_mask(text: &str) -> Result<PageMask, MaskError> {
    let t = text.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    let digits: Vec<char> = t.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return Err(MaskError::Empty);
    }
    if digits.len() > PAGES_PER_BLOCK / 4 {
        return Err(MaskError::TooLong(digits.len()));
    }
    let mut mask = empty_mask();
    // The last digit holds pages 0..4; walk from it towards the most significant.
    for (nibble_index, c) in digits.iter().rev().enumerate() {
        let v = c.to_digit(16).ok_or(MaskError::BadDigit(*c))?;
        for bit in 0..4 {
            if v & (1 << bit) != 0 {
                mask.set(nibble_index * 4 + bit, true);
            }
        }
    }
    Ok(mask)
}

/// Format a mask as minimal hex with a `0x` prefix (`0x0` when empty).
pub fn format_hex_mask(mask: &PageMask) -> String {
    let mut digits = String::with_capacity(PAGES_PER_BLOCK / 4 + 2);
    for nibble_index in (0..PAGES_PER_BLOCK / 4).rev() {
        let v: u32 = (0..4)
            .map(|bit| (mask[nibble_index * 4 + bit] as u32) << bit)
            .sum();
        if digits.is_empty() && v == 0 {
            continue;
        }
        digits.push(char::from_digit(v, 16).unwrap_or('0'));
    }
    if digits.is_empty() {
        digits.push('0');
    }
    format!("0x{digits}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_puts_page_zero_in_the_lowest_bit() {
        let m = parse_hex_mask("0x8001").unwrap();
        assert!(m[0] && m[15]);
        assert_eq!(m.count_ones(), 2);
        assert_eq!(format_hex_mask(&m), "0x8001");
        let full = "f".repeat(128);
        assert_eq!(parse_hex_mask(&full).unwrap().count_ones(), 512);
        assert_eq!(format_hex_mask(&empty_mask()), "0x0");
    }

    #[test]
    fn malformed_masks_are_rejected() {
        assert_eq!(parse_hex_mask(""), Err(MaskError::Empty));
        assert_eq!(parse_hex_mask("0xg"), Err(MaskError::BadDigit('g')));
        assert_eq!(
            parse_hex_mask(&"1".repeat(129)),
            Err(MaskError::TooLong(129))
        );
    }
}
