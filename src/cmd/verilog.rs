//! `mcmvm verilog` (waiting for rtl::emit and the cosim API to land).

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`mcmvm verilog` is not built yet")
}
