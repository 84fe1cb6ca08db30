//! Transparent huge pages for the simulator's own heap.
//!
//! The GPU model touches a different warp's generator state, a different SM's L1 tags and
//! TLBs and a different chiplet's L2 tags on nearly every instruction: some 20 MB of heap,
//! hit at random. On 4 KB host pages that is more pages than the host's second-level TLB
//! maps (Zen 4: 3,072 entries, 12 MB), so many of those loads also wait for a host page
//! walk. Where the kernel's THP mode is `madvise` (Ubuntu's default, and this project's
//! machines'), the heap stays on 4 KB pages unless it asks for more.
//!
//! So before any command runs, `main` has glibc grow the main heap in one large step,
//! keep large blocks in it (not in separate mappings) and never give its top back, and
//! asks the kernel to back that range with 2 MB pages as it is touched. Only the
//! main thread allocates from the main heap; a sweep's worker threads use glibc's other
//! arenas, which stay on 4 KB pages. Nothing here changes a simulated number, only how
//! fast the host gets there. Everything is best effort: on another libc or kernel, or
//! with THP off, the calls fail quietly and the heap is what it always was.

/// Heap the first growth reserves (virtual; pages are backed as they are touched). A
/// default-scale run's model is ~30 MB; a run past this keeps growing on 4 KB pages.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HEAP_RESERVE: usize = 256 << 20;

/// Largest block glibc may put in the heap instead of its own mapping (glibc's maximum).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: usize = 32 << 20;

/// The host's huge page size on x86-64 and most arm64 kernels.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HUGE_PAGE: usize = 2 << 20;

/// Ask for the main heap on huge pages. Whether the kernel took the advice shows in
/// [`huge_page_bytes`], which runs print.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn heap_on_huge_pages() {
    // SAFETY: mallopt only changes glibc's tunables; a malloc/free of one huge page,
    // its pointer never read or written, makes the heap grow under them (Rust's
    // allocator is glibc's malloc here).
    unsafe {
        if libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int) == 0
            || libc::mallopt(libc::M_TOP_PAD, HEAP_RESERVE as libc::c_int) == 0
            || libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX) == 0
        {
            return;
        }
        // Rust's runtime has allocated already, so the pad applies at the heap's next
        // growth: ask for more than is free at the top.
        // (`black_box`: the compiler would otherwise drop an unused malloc/free pair.)
        let p = std::hint::black_box(libc::malloc(HUGE_PAGE));
        libc::free(p);
    }
    let Some((start, end)) = heap_range() else {
        return;
    };
    let (start, end) = (
        start.next_multiple_of(HUGE_PAGE),
        end / HUGE_PAGE * HUGE_PAGE,
    );
    if end <= start {
        return;
    }
    // SAFETY: the range lies inside the process's own heap mapping; MADV_HUGEPAGE changes
    // how its pages are backed, never their contents.
    // A refusal (THP off) leaves the heap on 4 KB pages, as it always was.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

/// Other platforms: nothing to do.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn heap_on_huge_pages() {}

/// Start and end address of the `[heap]` mapping, from `/proc/self/maps`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn heap_range() -> Option<(usize, usize)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[heap]"))?;
    let (start, rest) = line.split_once('-')?;
    let end = rest.split_whitespace().next()?;
    Some((
        usize::from_str_radix(start, 16).ok()?,
        usize::from_str_radix(end, 16).ok()?,
    ))
}

/// Bytes of this process's memory on transparent huge pages (`AnonHugePages` in
/// `/proc/self/smaps_rollup`), for the speed line; `None` where the kernel does not say.
pub fn huge_page_bytes() -> Option<u64> {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    let line = rollup.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb << 10)
}
