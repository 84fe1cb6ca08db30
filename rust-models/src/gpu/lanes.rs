//! Coalescing a warp instruction's lanes into distinct 128-byte lines, as the SM's
//! load/store unit does before it looks anything up.

use super::config::LINE_BYTES;
use crate::workload::Lanes;

/// Fill `out` with the byte offsets (line-aligned, relative to the allocation) of the
/// distinct 128-byte lines the lanes touch, ascending. Returns one past the largest byte
/// touched (0 when no lane is active), for the caller's bounds check.
#[inline]
pub fn lines_of(lanes: &Lanes, out: &mut Vec<u64>) -> u64 {
    out.clear();
    match *lanes {
        Lanes::Strided {
            offset,
            stride,
            lanes,
            elem,
        } => {
            if lanes == 0 {
                return 0;
            }
            let elem = (elem as u64).max(1);
            let end = offset + (lanes as u64 - 1) * stride + elem;
            if stride <= LINE_BYTES {
                // Lanes at most a line apart leave no line between the first and last
                // byte untouched.
                let mut l = offset / LINE_BYTES;
                let last = (end - 1) / LINE_BYTES;
                while l <= last {
                    out.push(l * LINE_BYTES);
                    l += 1;
                }
            } else {
                for i in 0..lanes as u64 {
                    let a = offset + i * stride;
                    let (l0, l1) = (a / LINE_BYTES, (a + elem - 1) / LINE_BYTES);
                    out.push(l0 * LINE_BYTES);
                    if l1 != l0 {
                        out.push(l1 * LINE_BYTES);
                    }
                }
            }
            end
        }
        Lanes::Gather { ref offsets, elem } => {
            let elem = (elem as u64).max(1);
            let mut end = 0;
            for &a in offsets.iter() {
                let (l0, l1) = (a / LINE_BYTES, (a + elem - 1) / LINE_BYTES);
                out.push(l0 * LINE_BYTES);
                if l1 != l0 {
                    out.push(l1 * LINE_BYTES);
                }
                end = end.max(a + elem);
            }
            if out.len() == 2 {
                // One or two lines from one or two lanes (most gathers of a sparse
                // frontier): order them without a sort.
                let (a, b) = (out[0], out[1]);
                out[0] = a.min(b);
                out[1] = a.max(b);
                out.truncate(1 + (a != b) as usize);
            } else {
                out.sort_unstable();
                out.dedup();
            }
            end
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_stride_warp_of_floats_is_one_line() {
        let mut v = Vec::new();
        let l = Lanes::Strided {
            offset: 256,
            stride: 4,
            lanes: 32,
            elem: 4,
        };
        assert_eq!(lines_of(&l, &mut v), 384);
        assert_eq!(v, vec![256]);
    }

    #[test]
    fn misaligned_and_wide_strides_touch_every_line_once() {
        let mut v = Vec::new();
        let l = Lanes::Strided {
            offset: 64,
            stride: 8,
            lanes: 32,
            elem: 8,
        };
        lines_of(&l, &mut v);
        assert_eq!(v, vec![0, 128, 256]);
        let l = Lanes::Strided {
            offset: 0,
            stride: 4096,
            lanes: 3,
            elem: 4,
        };
        lines_of(&l, &mut v);
        assert_eq!(v, vec![0, 4096, 8192]);
    }

    #[test]
    fn gathers_are_sorted_and_deduplicated() {
        let mut v = Vec::new();
        let l = Lanes::Gather {
            offsets: vec![300, 4, 260, 126].into(),
            elem: 4,
        };
        assert_eq!(lines_of(&l, &mut v), 304);
        assert_eq!(v, vec![0, 128, 256]);
    }
}
