//! `mcmvm report [--out DIR]`: SVG figures and `DIR/report.html` from the files `mcmvm hw`
//! and the two sweeps wrote into DIR (no simulation is run). A missing input skips its
//! figure with a one-line note; a malformed one is an error naming the file and line.

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The studies' output directory (`make run` writes out/, out/clap, out/forest); the
    /// figures and report.html are written there too.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Configuration files shown on the page (repeat the flag; default: the ones `make run`
    /// uses).
    #[arg(
        long = "config",
        default_values = [
            "configs/mcm-4chiplet.toml",
            "configs/uvm-turing.toml",
            "configs/hw.toml",
        ]
    )]
    pub configs: Vec<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let opts = mcmvm_report::Options {
        out: args.out,
        configs: args.configs,
    };
    let done = mcmvm_report::build(&opts)?;
    for n in &done.notes {
        println!("note: {n}");
    }
    let (html, figures) = done
        .written
        .split_last()
        .ok_or_else(|| anyhow::anyhow!("report wrote no file"))?;
    for f in figures {
        println!("wrote {}", f.display());
    }
    println!("report: {}", html.display());
    Ok(0)
}
