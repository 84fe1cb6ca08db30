//! `mcmvm pagetable`: the page-table writes of mapping one range, amdgpu style.
//!
//! Maps `--pages` pages from VPN `--start` into an empty table and prints one line per
//! write (level, first VPN, entry count, fragment, leaf-at-PDE) and the page-table page
//! count. VRAM frames start at `--pfn` (default: the start VPN, so physical alignment
//! matches virtual); `--system` maps host memory (fragment 0).

use anyhow::{bail, Context};
use mcmvm_models::addr::{Pfn, Vpn};
use mcmvm_models::pagetable::{
    MapOpts, MapTarget, PageTable, PtWrite, SequentialTablePages, VPN_BITS,
};
use mcmvm_models::pte::FRAG_MAX;

#[derive(clap::Args)]
pub struct Args {
    /// First virtual page number (4 KB pages), decimal or 0x-hex.
    #[arg(long, value_name = "VPN")]
    start: String,
    /// Number of 4 KB pages, decimal or 0x-hex.
    #[arg(long, value_name = "N")]
    pages: String,
    /// First physical frame (VRAM), decimal or 0x-hex.
    #[arg(long, value_name = "PFN", conflicts_with = "system")]
    pfn: Option<String>,
    /// Map system (host) memory: physically scattered, always fragment 0.
    #[arg(long)]
    system: bool,
    /// Fragment cap: 31 on GMC v9 and later, 9 (fragment_size) before.
    #[arg(long, value_name = "F", default_value = "31")]
    max_frag: String,
    /// No huge pages: always descend to the PTB (GPUs before GMC v9).
    #[arg(long)]
    no_huge: bool,
    /// Print JSON: {"writes":[...],"pt_pages":N}.
    #[arg(long)]
    json: bool,
}

/// A decimal or 0x-hex number; `what` names the option in the error.
fn number(s: &str, what: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => t.replace('_', "").parse::<u64>(),
    };
    parsed.with_context(|| format!("{what}: `{s}` is not a decimal or 0x-hex number"))
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let start = number(&args.start, "--start")?;
    let pages = number(&args.pages, "--pages")?;
    let max_frag = number(&args.max_frag, "--max-frag")?;
    if pages == 0 {
        bail!("--pages: must be at least 1");
    }
    if start
        .checked_add(pages)
        .is_none_or(|e| e > 1u64 << VPN_BITS)
    {
        bail!("--start/--pages: {start:#x}+{pages:#x} leaves the 48-bit virtual address space (VPNs below {:#x})", 1u64 << VPN_BITS);
    }
    if max_frag > FRAG_MAX as u64 {
        bail!("--max-frag: {max_frag} does not fit the 5-bit FRAG field (0..=31)");
    }
    let target = match &args.pfn {
        Some(p) => MapTarget::Frames(Pfn(number(p, "--pfn")?)),
        None if args.system => MapTarget::System(Pfn(start)),
        None => MapTarget::Frames(Pfn(start)),
    };
    let opts = MapOpts {
        max_frag: max_frag as u32,
        no_huge: args.no_huge,
        ..MapOpts::default()
    };
    // Table pages from frames above any data frame the user can name.
    let mut tables = SequentialTablePages::new(Pfn(1 << 35));
    let mut pt = PageTable::new(&mut tables)?;
    let writes = pt.map(Vpn(start), pages, target, &opts, &mut tables)?;
    if args.json {
        print_json(&writes, pt.pt_pages());
    } else {
        print_table(&writes, pt.pt_pages());
    }
    Ok(0)
}

fn print_json(writes: &[PtWrite], pt_pages: u64) {
    let v = serde_json::json!({
        "writes": writes.iter().map(|w| serde_json::json!({
            "level": w.level.name(),
            "first_vpn": w.first_vpn.0,
            "count": w.count,
            "frag": w.frag,
            "pde_as_pte": w.pde_as_pte,
        })).collect::<Vec<_>>(),
        "pt_pages": pt_pages,
    });
    println!("{v}");
}

fn print_table(writes: &[PtWrite], pt_pages: u64) {
    println!(
        "{:<5} {:>14} {:>8} {:>5}  leaf-at-PDE",
        "level", "first_vpn", "count", "frag"
    );
    for w in writes {
        println!(
            "{:<5} {:>#14x} {:>8} {:>5}  {}",
            w.level.name(),
            w.first_vpn.0,
            w.count,
            w.frag,
            if w.pde_as_pte { "yes" } else { "no" }
        );
    }
    println!("pt_pages: {pt_pages}");
}
