//! Appends to a hand-over batch with non-temporal stores.
//!
//! The system's thread writes every block cycle's input and outputs into a batch that the
//! checker thread reads on the other core: 168 bytes a cycle for the ATT, 1,024 cycles a
//! batch, up to ten batches in rotation — most of the system core's 2 MB L2. Written as
//! ordinary stores, each of those host cache lines was first read for ownership from the
//! checker's core (which had read it last) and then held in the system core's caches,
//! evicting the GPU model's own working set, which is what the model's loop waits on
//! (`data_access` took 4x its samples under `--hw verilator`). Non-temporal stores fill
//! whole lines in write-combining buffers and send them on, neither reading nor keeping
//! them. They are weakly ordered, so [`fence`] must run before a batch is handed over.

use mcmvm_models::protocol::Ports;

/// Append `x` to `v`, bypassing this core's caches where the host can.
#[inline(always)]
pub(super) fn push<T: Ports>(v: &mut Vec<T>, x: &T) {
    let words = std::mem::size_of::<T>() / 8;
    debug_assert_eq!(words, T::PORTS.len(), "a Ports struct is one u64 per port");
    if v.len() == v.capacity() {
        v.push(*x);
        return;
    }
    // SAFETY: `T: Ports` is `#[repr(C)]` with one `u64` per port (the trait's contract),
    // so `x` is `words` initialised, aligned `u64`s, and the slot at `len` (within the
    // capacity, checked above) holds them; once they are written it is a valid `T`.
    unsafe {
        let src = (x as *const T).cast::<u64>();
        let dst = v.as_mut_ptr().add(v.len()).cast::<u64>();
        for k in 0..words {
            store(dst.add(k), *src.add(k));
        }
        v.set_len(v.len() + 1);
    }
}

/// [`push`] for a plain word.
#[inline(always)]
pub(super) fn push_word(v: &mut Vec<u64>, x: u64) {
    if v.len() == v.capacity() {
        v.push(x);
        return;
    }
    // SAFETY: the slot at `len` is within the capacity (checked above); once written it
    // is an initialised `u64`.
    unsafe {
        store(v.as_mut_ptr().add(v.len()), x);
        v.set_len(v.len() + 1);
    }
}

/// Make every non-temporal store so far visible before what follows (the hand-over's
/// channel send, whose release ordering does not cover them).
#[inline]
pub(super) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline; a fence has no operands.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// One word to `dst`, non-temporal on x86-64.
///
/// # Safety
/// `dst` is valid for an aligned `u64` write.
#[inline(always)]
unsafe fn store(dst: *mut u64, x: u64) {
    #[cfg(target_arch = "x86_64")]
    std::arch::x86_64::_mm_stream_si64(dst.cast::<i64>(), x as i64);
    #[cfg(not(target_arch = "x86_64"))]
    dst.write(x);
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcmvm_models::protocol::AttIn;

    #[test]
    fn streamed_values_read_back_as_pushed_and_past_the_capacity() {
        let mut ins: Vec<AttIn> = Vec::with_capacity(3);
        let mut cycles: Vec<u64> = Vec::with_capacity(3);
        let make = |k: u64| AttIn {
            acc_valid: k & 1,
            acc_vpn: 0x1234_5678 + k,
            reg_start_vpn: k << 20,
            reg_end_vpn: (k << 20) + 7,
            cease_obj: k % 32,
            ..AttIn::default()
        };
        for k in 0..5 {
            push(&mut ins, &make(k));
            push_word(&mut cycles, 1000 + k);
        }
        fence();
        assert_eq!(ins, (0..5).map(make).collect::<Vec<_>>());
        assert_eq!(cycles, (1000..1005).collect::<Vec<_>>());
    }
}
