//! `mcmvm run` (being written).

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`mcmvm run` is not built yet")
}
