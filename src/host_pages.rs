//! The simulator's heap: mimalloc, on transparent huge pages.
//!
//! The GPU model touches a different warp's generator state, a different SM's L1 tags and
//! TLBs and a different chiplet's L2 tags on nearly every instruction: some 20 MB of heap,
//! hit at random. On 4 KB host pages that is more pages than the host's second-level TLB
//! maps (Zen 4: 3,072 entries, 12 MB), so many of those loads would also wait for a host
//! page walk. mimalloc reserves its memory in large aligned regions and asks the kernel to
//! back them with 2 MB pages (`MADV_HUGEPAGE`, its `allow_thp` option, on by default), in
//! every thread: a sweep's workers as well as a single run's main thread.
//!
//! Why not glibc's malloc: its huge pages would cover the main thread's heap only (the
//! other threads' arenas stay on 4 KB pages), and once a second thread runs — the checker
//! thread of `--hw verilator|check` — its free takes the arena's lock and leaves its
//! per-thread cache sooner. On `uvm-backprop`, whose gathers box their lane offsets,
//! `_int_free` was then 30 % of the system thread's samples (4 % in the twin's run), and
//! the Verilog in the loop cost 0.29-0.38 s against the twin's 0.16 s. Nothing here
//! changes a simulated number, only how fast the host gets there.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Bytes of this process's memory on transparent huge pages (`AnonHugePages` in
/// `/proc/self/smaps_rollup`), for the speed line; `None` where the kernel does not say.
pub fn huge_page_bytes() -> Option<u64> {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    let line = rollup.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb << 10)
}
