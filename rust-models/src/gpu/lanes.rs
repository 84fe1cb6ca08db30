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
        } => strided_lines(offset, stride, lanes as u64, (elem as u64).max(1), out),
        Lanes::Gather { ref offsets, elem } => gather_lines(offsets, (elem as u64).max(1), out),
        Lanes::Rows {
            offset,
            row_stride,
            rows,
            lanes,
            elem,
        } => {
            let (lanes, elem) = (lanes as u64, (elem as u64).max(1));
            let mut end = 0;
            for r in 0..rows as u64 {
                end = strided_lines(offset + r * row_stride, elem, lanes, elem, out);
            }
            if row_stride < lanes * elem {
                // Rows that overlap may list a line before the previous row's last.
                out.sort_unstable();
            }
            // Rows apart list their lines ascending, a line two rows share twice in a row.
            out.dedup();
            end
        }
    }
}

/// The lines of `lanes` lanes of `elem` bytes, `stride` apart from `offset`.
#[inline]
fn strided_lines(offset: u64, stride: u64, lanes: u64, elem: u64, out: &mut Vec<u64>) -> u64 {
    if lanes == 0 {
        return 0;
    }
    let end = offset + (lanes - 1) * stride + elem;
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
        for i in 0..lanes {
            push_lane(offset + i * stride, elem, out);
        }
    }
    end
}

/// The lines of lanes of `elem` bytes at `offsets`, sorted and deduplicated.
#[inline]
fn gather_lines(offsets: &[u64], elem: u64, out: &mut Vec<u64>) -> u64 {
    let mut end = 0;
    for &a in offsets.iter() {
        push_lane(a, elem, out);
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

/// The line of a lane's first byte at `a`, and the next line if its `elem` bytes cross
/// into it.
#[inline(always)]
fn push_lane(a: u64, elem: u64, out: &mut Vec<u64>) {
    let (l0, l1) = (a / LINE_BYTES, (a + elem - 1) / LINE_BYTES);
    out.push(l0 * LINE_BYTES);
    if l1 != l0 {
        out.push(l1 * LINE_BYTES);
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
            stride: crate::addr::PAGE_4K,
            lanes: 3,
            elem: 4,
        };
        lines_of(&l, &mut v);
        let page = crate::addr::PAGE_4K;
        assert_eq!(v, vec![0, page, 2 * page]);
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

    /// A tile of rows touches the lines, and ends where, the gather of its lanes does:
    /// rows apart, rows sharing a line, overlapping rows, misaligned rows.
    #[test]
    fn rows_touch_the_lines_of_the_gather_of_their_lanes() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (offset, row_stride, rows, lanes, elem) in [
            (8184u64, 8192u64, 2u8, 16u8, 4u8),
            (120, 64, 2, 4, 4),
            (0, 8, 2, 16, 4),
            (124, 8192, 1, 3, 8),
            (0, 8192, 2, 0, 4),
            (0, 8192, 0, 16, 4),
        ] {
            let rows = Lanes::Rows {
                offset,
                row_stride,
                rows,
                lanes,
                elem,
            };
            let offsets: Vec<u64> = (0..rows.active()).map(|i| rows.lane_offset(i)).collect();
            let gather = Lanes::Gather {
                offsets: offsets.into(),
                elem,
            };
            assert_eq!(lines_of(&rows, &mut a), lines_of(&gather, &mut b));
            assert_eq!(a, b, "{rows:?}");
        }
    }
}
