//! Stimulus for the TLB coalescing logic (CLAP §4.6).
//!
//! * [`directed_cases`] — one short, named sequence per documented behaviour, each starting
//!   with a reset and ending with an idle cycle that lets the registered result out;
//!   [`directed`] is all of them back to back.
//! * [`random`] — an endless seeded sequence with random gaps, occasional resets, lines that
//!   are mostly contiguous with a few broken slots, and lookups aimed at the boundaries of
//!   the entries it merged.

use mcmvm_models::blocks::tlb_coalescer::{PTE_PFN_BITS, PTE_PFN_SHIFT, PTE_VALID, SLOTS};
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::CoalIn;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Readable + writeable (PTE bits 5 and 6).
pub const PERM_RW: u64 = 0b110_0000;
/// Readable only.
pub const PERM_RO: u64 = 0b010_0000;
/// Readable + writeable + executable (bit 4).
pub const PERM_RWX: u64 = 0b111_0000;
/// FRAG field (bits 7..=11), allocation ID (48..=55) and PDE-as-PTE (56): the merge ignores them.
pub const IGNORED_FIELDS: u64 = (0x1F << 7) | (0xFF << 48) | (1 << 56);

/// A valid PTE mapping coalesced-size page `ppn` (PFN = `ppn << page_frames_log2`).
pub fn pte(cfg: &HwConfig, ppn: u64, permissions: u64) -> u64 {
    let pfn = (ppn << cfg.tlb_coalescer.page_frames_log2) & ((1u64 << PTE_PFN_BITS) - 1);
    PTE_VALID | permissions | (pfn << PTE_PFN_SHIFT)
}

/// A line whose slot `i` maps PPN `first_ppn + i` (32-bit wrap) with `permissions`.
pub fn contiguous_line(cfg: &HwConfig, first_ppn: u64, permissions: u64) -> [u64; SLOTS] {
    core::array::from_fn(|i| pte(cfg, (first_ppn + i as u64) & 0xFFFF_FFFF, permissions))
}

/// A merge request for `line` around `vpn`.
pub fn merge(vpn: u64, line: &[u64; SLOTS]) -> CoalIn {
    let mut input = CoalIn {
        merge_valid: 1,
        merge_vpn: vpn,
        ..Default::default()
    };
    input.set_ptes(line);
    input
}

/// A lookup of `vpn` in the entry (base VPN, base PPN, mask).
pub fn lookup(vpn: u64, base_vpn: u64, base_ppn: u64, mask: u64) -> CoalIn {
    CoalIn {
        lookup_valid: 1,
        lookup_vpn: vpn,
        entry_base_vpn: base_vpn,
        entry_base_ppn: base_ppn,
        entry_mask: mask,
        ..Default::default()
    }
}

const RESET: CoalIn = CoalIn {
    reset: 1,
    merge_valid: 0,
    merge_vpn: 0,
    pte0: 0,
    pte1: 0,
    pte2: 0,
    pte3: 0,
    pte4: 0,
    pte5: 0,
    pte6: 0,
    pte7: 0,
    pte8: 0,
    pte9: 0,
    pte10: 0,
    pte11: 0,
    pte12: 0,
    pte13: 0,
    pte14: 0,
    pte15: 0,
    lookup_valid: 0,
    lookup_vpn: 0,
    entry_base_vpn: 0,
    entry_base_ppn: 0,
    entry_mask: 0,
};

/// One named directed sequence.
#[derive(Debug, Clone)]
pub struct DirectedCase {
    /// Short name, used for the wave file `tlb_coalescer_<name>.vcd`.
    pub name: &'static str,
    /// Reset, the operations, then one idle cycle.
    pub inputs: Vec<CoalIn>,
}

fn case(name: &'static str, ops: Vec<CoalIn>) -> DirectedCase {
    let mut inputs = vec![RESET];
    inputs.extend(ops);
    inputs.push(CoalIn::default());
    DirectedCase { name, inputs }
}

/// Every documented behaviour, one case each. The expected outputs are pinned in
/// `tests/tlb_coalescer.rs`.
pub fn directed_cases(cfg: &HwConfig) -> Vec<DirectedCase> {
    let full = contiguous_line(cfg, 0x500, PERM_RW);
    let holes = holes_line(cfg);
    let mut cases = vec![
        case("full_contiguity", vec![merge(0x1_0103, &full)]),
        case("partial_contiguity", vec![merge(0x5_0030, &holes)]),
        case(
            "permission_mismatch",
            vec![merge(0x20, &permissions_line(cfg))],
        ),
        case("offset_mismatch", vec![merge(0x7_0F04, &offsets_line(cfg))]),
        mask_shapes_case(cfg),
        invalid_requested_case(cfg),
        case(
            "ignored_fields",
            vec![merge(0xABC1, &ignored_fields_line(cfg))],
        ),
        ppn_wrap_case(cfg),
        lookup_boundaries_case(),
    ];
    cases.extend(pipelined_cases(&full, &holes));
    cases
}

/// Contiguous from PPN 0x2_0040 with holes at slots 2 (zero), 3 (invalid) and 10.
fn holes_line(cfg: &HwConfig) -> [u64; SLOTS] {
    let mut holes = contiguous_line(cfg, 0x2_0040, PERM_RW);
    holes[2] = 0;
    holes[3] = pte(cfg, 0x2_0043, PERM_RW) & !PTE_VALID;
    holes[10] = 0;
    holes
}

/// Contiguous, but slots 5..=7 differ in permissions or the system bit.
fn permissions_line(cfg: &HwConfig) -> [u64; SLOTS] {
    let mut permissions = contiguous_line(cfg, 0x80, PERM_RW);
    permissions[5] = pte(cfg, 0x85, PERM_RWX);
    permissions[6] = pte(cfg, 0x86, PERM_RO);
    permissions[7] |= 1 << 1; // system bit
    permissions
}

/// Contiguous, but slots 9 and 12 map frames at other offsets.
fn offsets_line(cfg: &HwConfig) -> [u64; SLOTS] {
    let mut offsets = contiguous_line(cfg, 0x1000, PERM_RW);
    offsets[9] = pte(cfg, 0x7777, PERM_RW); // another reservation
    offsets[12] = pte(cfg, 0x1000 + 13, PERM_RW); // off by one page
    offsets
}

/// Contiguous, with the fields the coalescer must ignore set (and one misaligned frame).
fn ignored_fields_line(cfg: &HwConfig) -> [u64; SLOTS] {
    let mut ignored_fields = contiguous_line(cfg, 0x640, PERM_RW);
    ignored_fields[1] |= IGNORED_FIELDS;
    ignored_fields[8] |= 0x3 << 7; // FRAG = 3
    ignored_fields[14] |= 1 << PTE_PFN_SHIFT; // misaligned frame: excluded
    ignored_fields
}

/// Masks 0x0040 (slot 6 alone, base 0x4440) and 0x0FF0 (base 0xA00).
fn mask_shapes_case(cfg: &HwConfig) -> DirectedCase {
    // Only the requested slot 6 keeps its offset: the mask is that one bit.
    let mut alone = contiguous_line(cfg, 0x900, PERM_RW);
    alone[6] = pte(cfg, 0x4446, PERM_RW);
    // Slots 4..=11 contiguous, the rest invalid: one run that is not the whole line.
    let mut run = contiguous_line(cfg, 0xA00, PERM_RW);
    for slot in (0..4).chain(12..SLOTS) {
        run[slot] = 0;
    }
    case(
        "mask_shapes",
        vec![merge(0x3_0016, &alone), merge(0x3_0028, &run)],
    )
}

/// The requested slot invalid, then misaligned (requested and not).
fn invalid_requested_case(cfg: &HwConfig) -> DirectedCase {
    let mut invalid_requested = contiguous_line(cfg, 0x300, PERM_RW);
    invalid_requested[6] &= !PTE_VALID;
    let mut misaligned_requested = contiguous_line(cfg, 0x300, PERM_RW);
    misaligned_requested[6] |= 1 << PTE_PFN_SHIFT;
    case(
        "invalid_requested",
        vec![
            merge(0x96, &invalid_requested),
            merge(0x96, &misaligned_requested),
            merge(0x95, &misaligned_requested),
        ],
    )
}

/// Requested slot 7 maps PPN 2: base PPN 2 - 7 wraps to 0xFFFF_FFFB.
fn ppn_wrap_case(cfg: &HwConfig) -> DirectedCase {
    let wrap = contiguous_line(cfg, 0xFFFF_FFFB, PERM_RW);
    case(
        "ppn_wrap",
        vec![
            merge(0xFFFF_FFF7, &wrap),
            lookup(0xFFFF_FFFF, 0xFFFF_FFF0, 0xFFFF_FFFB, 0xFFFF),
            lookup(0xFFFF_FFF4, 0xFFFF_FFF0, 0xFFFF_FFFB, 0xFFFF),
        ],
    )
}

fn lookup_boundaries_case() -> DirectedCase {
    let entry = (0x1230u64, 0x4000u64, 0x8421u64 | 0x0100);
    case(
        "lookup_boundaries",
        vec![
            lookup(0x1230, entry.0, entry.1, entry.2),   // slot 0: hit
            lookup(0x123F, entry.0, entry.1, entry.2),   // slot 15: hit
            lookup(0x122F, entry.0, entry.1, entry.2),   // just below the group
            lookup(0x1240, entry.0, entry.1, entry.2),   // just above the group
            lookup(0x1231, entry.0, entry.1, entry.2),   // hole
            lookup(0x1238, 0x1238, entry.1, entry.2),    // base low bits ignored
            lookup(0x1_1238, entry.0, entry.1, entry.2), // high tag bit differs
            lookup(0x1238, entry.0, entry.1, 0),         // empty entry
        ],
    )
}

/// A merge and a lookup in one cycle, back to back; and a reset beside both.
fn pipelined_cases(full: &[u64; SLOTS], holes: &[u64; SLOTS]) -> [DirectedCase; 2] {
    [
        case(
            "back_to_back",
            vec![
                CoalIn {
                    lookup_valid: 1,
                    lookup_vpn: 0x1_0105,
                    entry_base_vpn: 0x1_0100,
                    entry_base_ppn: 0x500,
                    entry_mask: 0xFFFF,
                    ..merge(0x1_0103, full)
                },
                merge(0x5_003F, holes),
                CoalIn::default(),
                CoalIn::default(),
                lookup(0x1_0100, 0x1_0100, 0x500, 0x0002),
            ],
        ),
        case(
            "reset_blocks_updates",
            vec![
                merge(0x1_0103, full),
                CoalIn {
                    reset: 1,
                    lookup_valid: 1,
                    lookup_vpn: 0x1_0105,
                    entry_base_vpn: 0x1_0100,
                    entry_base_ppn: 0x500,
                    entry_mask: 0xFFFF,
                    ..merge(0x5_0030, holes)
                },
            ],
        ),
    ]
}

/// All directed cases back to back (a reset first).
pub fn directed(cfg: &HwConfig) -> Vec<CoalIn> {
    directed_cases(cfg)
        .into_iter()
        .flat_map(|c| c.inputs)
        .collect()
}

/// Endless seeded stimulus (ChaCha8): random gaps, a reset about every 500 cycles (half of
/// them with requests, which the reset must drop), lines that are contiguous except for a
/// few broken slots, lookups around recent entries.
pub fn random(cfg: &HwConfig, seed: u64) -> impl Iterator<Item = CoalIn> {
    let cfg = cfg.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // (base VPN, base PPN, mask) of recently built lines: lookups aim at these.
    let mut recent: Vec<(u64, u64, u64)> = vec![(0, 0, 0xFFFF)];
    let mut first = true;
    std::iter::from_fn(move || {
        if std::mem::take(&mut first) {
            return Some(RESET);
        }
        let reset = rng.gen_ratio(1, 500);
        if reset && rng.gen_bool(0.5) {
            return Some(RESET);
        }
        let mut input = random_request(&cfg, &mut rng, &mut recent);
        input.reset = u64::from(reset);
        Some(input)
    })
}

/// One cycle of requests: a gap, a merge, a lookup aimed at a recent entry, or both.
fn random_request(
    cfg: &HwConfig,
    rng: &mut ChaCha8Rng,
    recent: &mut Vec<(u64, u64, u64)>,
) -> CoalIn {
    let mut input = CoalIn::default();
    if rng.gen_bool(0.25) {
        return input; // gap
    }
    if rng.gen_bool(0.6) {
        let (vpn, line, base_ppn) = random_line(cfg, rng);
        input = merge(vpn, &line);
        let mask = if rng.gen_bool(0.5) {
            0xFFFF
        } else {
            rng.gen::<u16>() as u64
        };
        recent.push((vpn & !0xF, base_ppn, mask));
        if recent.len() > 8 {
            recent.remove(0);
        }
    }
    if rng.gen_bool(0.6) {
        let (base_vpn, base_ppn, mask) = recent[rng.gen_range(0..recent.len())];
        let vpn = match rng.gen_range(0..10) {
            0 => base_vpn.wrapping_sub(1) & 0xFFFF_FFFF,
            1 => (base_vpn + 16) & 0xFFFF_FFFF,
            2 => rng.gen::<u32>() as u64,
            3 => base_vpn ^ (1 << rng.gen_range(4..32)),
            _ => base_vpn + rng.gen_range(0..16),
        };
        input.lookup_valid = 1;
        input.lookup_vpn = vpn;
        input.entry_base_vpn = base_vpn | rng.gen_range(0..16); // low bits must not matter
        input.entry_base_ppn = base_ppn;
        input.entry_mask = mask;
    }
    input
}

/// A requested VPN, a line around it, and the line's intended base PPN.
fn random_line(cfg: &HwConfig, rng: &mut ChaCha8Rng) -> (u64, [u64; SLOTS], u64) {
    let vpn = match rng.gen_range(0..8) {
        0 => rng.gen_range(0..16),
        1 => 0xFFFF_FFF0 | rng.gen_range(0..16),
        _ => rng.gen::<u32>() as u64,
    };
    let base_ppn = match rng.gen_range(0..6) {
        0 => rng.gen_range(0..16),               // base below zero: wraps
        1 => 0xFFFF_FFF0 | rng.gen_range(0..16), // PPNs wrap past 2^32
        _ => rng.gen::<u32>() as u64,
    };
    let permissions = [PERM_RW, PERM_RO, PERM_RWX][rng.gen_range(0..3)];
    let mut line = contiguous_line(cfg, base_ppn, permissions);
    let broken = match rng.gen_range(0..4) {
        0 => 0,
        1 => 16, // a line from scattered 64 KB pages
        _ => rng.gen_range(1..6),
    };
    for _ in 0..broken {
        let slot = rng.gen_range(0..SLOTS);
        line[slot] = match rng.gen_range(0..7) {
            0 => 0,
            1 => line[slot] & !PTE_VALID,
            2 => line[slot] ^ (1 << rng.gen_range(1..7)), // a permission bit
            3 => pte(cfg, rng.gen::<u32>() as u64, permissions), // another offset
            4 => line[slot] | (1 << (PTE_PFN_SHIFT + rng.gen_range(0..4))), // misaligned
            5 => line[slot] | (rng.gen::<u64>() & IGNORED_FIELDS),
            _ => rng.gen::<u64>(),
        };
    }
    (vpn, line, base_ppn)
}
