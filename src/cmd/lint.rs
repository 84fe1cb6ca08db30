//! `mcmvm lint` (being written).

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`mcmvm lint` is not built yet")
}
