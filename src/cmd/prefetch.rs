//! `mcmvm prefetch`: explain one prefetch decision on a 2 MB VA block.
//!
//! `--policy tbnp` is the NVIDIA driver's tree prefetcher (2 MB tree, 64 KB big page,
//! threshold 51 by default); `--policy forest --class LS|HCHI|HCLI|LC` uses the tree and
//! leaf Forest gives that class (trees larger than the block are cut at the block).

use anyhow::{bail, Context};
use mcmvm_models::uvm::apd::AccessClass;
use mcmvm_models::uvm::config::ClassTrees;
use mcmvm_models::uvm::forest_tree::class_shape;
use mcmvm_models::uvm::mask::{
    empty_mask, format_hex_mask, parse_hex_mask, PageMask, PAGES_PER_BLOCK,
};
use mcmvm_models::uvm::tbnp::{compute_prefetch, TreeShape};

#[derive(clap::Args)]
pub struct Args {
    /// Prefetcher: tbnp or forest.
    #[arg(long, default_value = "tbnp")]
    policy: String,
    /// Forest access class (LS, HCHI, HCLI, LC) choosing the tree and leaf.
    #[arg(long)]
    class: Option<String>,
    /// Threshold in percent (strictly-greater comparison).
    #[arg(long, default_value_t = 51)]
    threshold: u32,
    /// TBNp big page (leaf) in KB.
    #[arg(long, default_value_t = 64)]
    big_page_kb: u64,
    /// Pages already resident on the GPU: 512-bit hex mask, page 0 = least significant bit.
    #[arg(long)]
    resident: String,
    /// Pages faulted in this batch: 512-bit hex mask, page 0 = least significant bit.
    #[arg(long)]
    faulted: String,
    /// The allocation's preferred location is the GPU: a block with nothing resident is
    /// populated whole on its first fault (as the driver does).
    #[arg(long)]
    preferred_gpu: bool,
    /// Print JSON: {"prefetch":"<hex>","regions":[{"first":..,"pages":..}],...}.
    #[arg(long)]
    json: bool,
}

/// What the prefetcher decided for one block.
struct Decision {
    /// The prefetched pages.
    prefetch: PageMask,
    /// `(first page, pages)` of each region it fetched.
    regions: Vec<(usize, usize)>,
    /// The preferred location is the GPU and nothing was resident: the whole block.
    first_touch: bool,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let resident = parse_hex_mask(&args.resident).context("--resident")?;
    let faulted = parse_hex_mask(&args.faulted).context("--faulted")?;
    if let Some(p) = (resident & faulted).first_one() {
        bail!("page {p} is both resident and faulted (a resident page cannot fault)");
    }
    if args.threshold > 100 {
        bail!(
            "--threshold {} is not a percentage (0..=100)",
            args.threshold
        );
    }
    let shape = tree_shape(&args)?;
    let first_touch = args.preferred_gpu && resident.not_any() && faulted.any();
    let d = if first_touch {
        whole_block(&faulted)
    } else {
        per_tree(&resident, &faulted, shape, args.threshold)
    };
    if args.json {
        print_json(&d, shape, args.threshold);
    } else {
        print_text(&args, &d, shape);
    }
    Ok(0)
}

/// The tree and leaf of `--policy` (and `--big-page-kb` or `--class`), checked.
fn tree_shape(args: &Args) -> anyhow::Result<TreeShape> {
    Ok(match args.policy.as_str() {
        "tbnp" => {
            let kb = args.big_page_kb;
            if !(4..=2048).contains(&kb) || !kb.is_power_of_two() {
                bail!("--big-page-kb {kb}: expected a power of two from 4 to 2048");
            }
            TreeShape::new(PAGES_PER_BLOCK, (kb / 4) as usize).map_err(anyhow::Error::msg)?
        }
        "forest" => {
            let name = args.class.as_deref().unwrap_or("LC");
            let class = AccessClass::ALL
                .into_iter()
                .find(|c| c.name().eq_ignore_ascii_case(name))
                .with_context(|| format!("--class {name}: expected LS, HCHI, HCLI or LC"))?;
            let s = class_shape(&ClassTrees::default(), class);
            TreeShape {
                tree_pages: s.tree_pages.min(PAGES_PER_BLOCK),
                leaf_pages: s.leaf_pages.min(PAGES_PER_BLOCK),
            }
        }
        other => bail!("unknown prefetch policy `{other}` (expected tbnp or forest)"),
    })
}

/// First touch with the GPU preferred: every page but the faulted ones, as one region.
fn whole_block(faulted: &PageMask) -> Decision {
    let mut prefetch = empty_mask();
    prefetch.fill(true);
    prefetch &= !*faulted;
    Decision {
        prefetch,
        regions: vec![(0usize, PAGES_PER_BLOCK)],
        first_touch: true,
    }
}

/// One prefetch decision per tree of the block, gathered into block pages.
fn per_tree(resident: &PageMask, faulted: &PageMask, shape: TreeShape, threshold: u32) -> Decision {
    let mut prefetch = empty_mask();
    let mut regions = Vec::new();
    for t in 0..PAGES_PER_BLOCK / shape.tree_pages {
        let lo = t * shape.tree_pages;
        let hi = lo + shape.tree_pages;
        let d = compute_prefetch(
            &resident[lo..hi],
            &faulted[lo..hi],
            shape.tree_pages,
            shape,
            threshold,
        );
        for i in d.prefetch.iter_ones() {
            prefetch.set(lo + i, true);
        }
        regions.extend(d.regions.iter().map(|r| (lo + r.first, r.pages)));
    }
    Decision {
        prefetch,
        regions,
        first_touch: false,
    }
}

fn print_json(d: &Decision, shape: TreeShape, threshold: u32) {
    let regions: Vec<serde_json::Value> = d
        .regions
        .iter()
        .map(|&(first, pages)| serde_json::json!({"first": first, "pages": pages}))
        .collect();
    let v = serde_json::json!({
        "prefetch": format_hex_mask(&d.prefetch),
        "regions": regions,
        "prefetched_pages": d.prefetch.count_ones(),
        "tree_pages": shape.tree_pages,
        "leaf_pages": shape.leaf_pages,
        "threshold": threshold,
    });
    println!("{v}");
}

fn print_text(args: &Args, d: &Decision, shape: TreeShape) {
    println!(
        "policy {} tree {} KB leaf {} KB threshold {}{}",
        args.policy,
        shape.tree_pages * 4,
        shape.leaf_pages * 4,
        args.threshold,
        if d.first_touch {
            " (first touch, preferred location GPU: whole block)"
        } else {
            ""
        }
    );
    println!("prefetch {}", format_hex_mask(&d.prefetch));
    println!("prefetched pages {}", d.prefetch.count_ones());
    for (first, pages) in &d.regions {
        println!(
            "region pages {}..{} ({} pages, {} KB)",
            first,
            first + pages - 1,
            pages,
            pages * 4
        );
    }
}
