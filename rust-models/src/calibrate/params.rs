//! THE one table of every timing parameter neither paper gives: its config key, the value
//! `configs/mcm-4chiplet.toml` ships, its plausible range and grid, and where the range
//! comes from. `mcmvm calibrate` searches this box; `mcmvm sweep --robustness` (issue #38
//! item 4) runs the headlines over it ([`plausible_box`]).
//!
//! Keys whose value 0 means "unbounded" (TLB ports, TLB miss registers, L1 MSHRs) have
//! their bounded literature figure as `low` and 0 as `high`: `low` is the end that
//! constrains the model more, `high` the end that constrains it less, whatever the numbers.

use serde::Serialize;

/// How a parameter's value is written in TOML (and in a `--set KEY=VALUE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An unsigned integer key (`64`).
    Integer,
    /// A float key (`768.0`): TOML keeps the decimal point so serde reads an `f64`.
    Real,
    /// A boolean key, held as 0.0 / 1.0 (`false` / `true`).
    Flag,
}

/// One timing parameter of the box.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Param {
    /// Dotted config key, `section.key`, as `--set` takes it.
    pub key: &'static str,
    /// Column name in the text table.
    pub short: &'static str,
    pub kind: Kind,
    /// The value `configs/mcm-4chiplet.toml` ships (what `calibrate` starts from).
    pub shipped: f64,
    /// The more constraining end of the plausible range (see the module doc).
    pub low: f64,
    /// The less constraining end.
    pub high: f64,
    /// The values worth visiting, `low` first: what a Latin-hypercube point picks from for
    /// a discrete parameter. (`--grid small` and `full` use `low` and `high` only.)
    pub grid: &'static [f64],
    /// A Latin-hypercube point interpolates between `low` and `high` (rounded for an
    /// integer); otherwise it picks one of `grid` (flags, 0 = unbounded keys).
    pub continuous: bool,
    /// Varied by `--grid small` (at `low` and `high`): the parameters that move the
    /// baseline targets most on the CLAP workloads (docs/calibration.md says why).
    pub primary: bool,
    /// Where the range comes from.
    pub source: &'static str,
}

impl Param {
    /// `value` as TOML text for this key: `64`, `3072.0`, `true`.
    pub fn format(&self, value: f64) -> String {
        match self.kind {
            Kind::Integer => format!("{}", value.round() as i64),
            Kind::Real => format!("{value:?}"),
            Kind::Flag => (value != 0.0).to_string(),
        }
    }

    /// The `--set` override that gives this key `value`.
    pub fn set(&self, value: f64) -> String {
        format!("{}={}", self.key, self.format(value))
    }

    /// The value at `u` in [0, 1) of the range: interpolated for a continuous parameter
    /// (rounded for an integer), else the grid value whose stratum holds `u`.
    pub fn at(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        if self.continuous {
            // Whole units (cycles, entries, GB/s): finer is false precision.
            let v = self.low + u * (self.high - self.low);
            match self.kind {
                Kind::Flag => v,
                Kind::Integer | Kind::Real => v.round(),
            }
        } else {
            let i = ((u * self.grid.len() as f64) as usize).min(self.grid.len() - 1);
            self.grid[i]
        }
    }

    /// The section and the key inside it (`walker`, `walkers_per_chiplet`).
    pub fn section_and_name(&self) -> (&'static str, &'static str) {
        self.key.split_once('.').unwrap_or(("", self.key))
    }
}

/// Every timing parameter of the MCM GPU model that neither CLAP nor its baselines' papers
/// give. Order: the primary ones first, then by where they sit in the access path.
pub const PARAMS: [Param; 11] = [
    Param {
        key: "interconnect.total_bandwidth_gbs",
        short: "ring_gbs",
        kind: Kind::Real,
        shipped: 768.0,
        low: 768.0,
        high: 3072.0,
        grid: &[768.0, 1536.0, 3072.0],
        continuous: true,
        primary: true,
        source: "CLAP Table 1 (seed A4): \"ring, 768 GB/s total inside the GPU\"; its source \
                 MCM-GPU (ISCA 2017) gives 768 GB/s per link: 4 ring links x 768 = 3072",
    },
    Param {
        key: "l2_tlb.lookups_per_cycle",
        short: "l2tlb_ports",
        kind: Kind::Integer,
        shipped: 0.0,
        low: 4.0,
        high: 0.0,
        grid: &[4.0, 0.0],
        continuous: false,
        primary: true,
        source: "not in CLAP; MGPUSim's L2 TLB has 4 ports (docs/results.md, Translation \
                 throughput); 0 = unbounded, the shipped value",
    },
    Param {
        key: "gpu.loads_in_flight_per_warp",
        short: "loads",
        kind: Kind::Integer,
        shipped: 4.0,
        low: 2.0,
        high: 4.0,
        grid: &[1.0, 2.0, 4.0, 8.0],
        continuous: true,
        primary: true,
        source: "not in CLAP; a V100 warp's scoreboard tracks a handful of pending loads: \
                 1-8 (docs/results.md shows 1, 2, 4, 8); the small grid uses 2 and 4",
    },
    Param {
        key: "walker.walkers_per_chiplet",
        short: "walkers",
        kind: Kind::Integer,
        shipped: 64.0,
        low: 8.0,
        high: 64.0,
        grid: &[8.0, 16.0, 32.0, 64.0],
        continuous: true,
        primary: false,
        source: "CLAP says \"multi-threaded\" only; Power et al. (HPCA 2014) highly-threaded \
                 walker: 32; MASK (ASPLOS 2018) / Mosaic (MICRO 2017): ~64; literature 8-64",
    },
    Param {
        key: "memory.dram_latency",
        short: "dram_lat",
        kind: Kind::Integer,
        shipped: 100.0,
        low: 250.0,
        high: 100.0,
        grid: &[250.0, 175.0, 100.0],
        continuous: true,
        primary: false,
        source: "not in CLAP; GPGPU-Sim's V100 config ~100 cycles; microbenchmarks (Jia et \
                 al. 2018, Dissecting Volta) put a V100 DRAM access at ~100-250 beyond the L2",
    },
    Param {
        key: "l1_tlb.lookups_per_cycle",
        short: "l1tlb_ports",
        kind: Kind::Integer,
        shipped: 0.0,
        low: 4.0,
        high: 0.0,
        grid: &[4.0, 0.0],
        continuous: false,
        primary: false,
        source: "not in CLAP; MGPUSim's L1 TLB: 4 lookups a cycle; 0 = unbounded (shipped)",
    },
    Param {
        key: "l1_tlb.misses_in_flight",
        short: "l1tlb_miss",
        kind: Kind::Integer,
        shipped: 0.0,
        low: 4.0,
        high: 0.0,
        grid: &[4.0, 0.0],
        continuous: false,
        primary: false,
        source: "not in CLAP; MGPUSim's L1 TLB: 4 outstanding misses; 0 = unbounded (shipped)",
    },
    Param {
        key: "l2_tlb.misses_in_flight",
        short: "l2tlb_miss",
        kind: Kind::Integer,
        shipped: 0.0,
        low: 64.0,
        high: 0.0,
        grid: &[64.0, 0.0],
        continuous: false,
        primary: false,
        source: "not in CLAP; MGPUSim's L2 TLB: 64 outstanding misses; 0 = unbounded (shipped)",
    },
    Param {
        key: "walker.pwc_entries",
        short: "pwc",
        kind: Kind::Integer,
        shipped: 64.0,
        low: 16.0,
        high: 128.0,
        grid: &[16.0, 64.0, 128.0],
        continuous: true,
        primary: false,
        source: "not in CLAP and no published GPU figure found; a quarter to twice the \
                 shipped 64 (assumed)",
    },
    Param {
        key: "gpu.l1_mshrs_per_sm",
        short: "l1_mshrs",
        kind: Kind::Integer,
        shipped: 0.0,
        low: 256.0,
        high: 0.0,
        grid: &[256.0, 0.0],
        continuous: false,
        primary: false,
        source: "not in CLAP; 256 is a plausible V100 bound (not a published figure); \
                 0 = unbounded (shipped)",
    },
    Param {
        key: "memory.serve_in_arrival_order",
        short: "arrival",
        kind: Kind::Flag,
        shipped: 1.0,
        low: 0.0,
        high: 1.0,
        grid: &[0.0, 1.0],
        continuous: false,
        primary: false,
        source: "a modelling choice, not hardware: serve L1 ports, channels and ring ports by \
                 arrival cycle (true, shipped) or by processing order (false)",
    },
];

/// The plausible box as (key, low, high), for `sweep --robustness` (corners or a Latin
/// hypercube over it). See the module doc for what low and high mean.
pub fn plausible_box() -> Vec<(&'static str, f64, f64)> {
    PARAMS.iter().map(|p| (p.key, p.low, p.high)).collect()
}

/// The UVM timing parameters neither the Forest paper nor its sources give
/// (`configs/uvm-turing.toml` marks them "assumption"), whole microseconds: `low` is the
/// slower end. Keys of the UVM config, not the GPU's. `shipped` is uvm-turing.toml's.
pub const UVM_PARAMS: [Param; 4] = [
    Param {
        key: "fault.block_update_us",
        short: "block_us",
        kind: Kind::Real,
        shipped: 2.0,
        low: 4.0,
        high: 1.0,
        grid: &[4.0, 2.0, 1.0],
        continuous: true,
        primary: true,
        source: "assumption (uvm-turing.toml): block lock, page-table update and TLB \
                 invalidate per 2 MB VA block of a batch; half to twice the shipped 2 us",
    },
    Param {
        key: "fault.interrupt_delay_us",
        short: "irq_us",
        kind: Kind::Real,
        shipped: 1.0,
        low: 4.0,
        high: 1.0,
        grid: &[4.0, 2.0, 1.0],
        continuous: true,
        primary: true,
        source: "assumption (uvm-turing.toml): interrupt to fault-buffer read, the window \
                 in which faults join a batch; 1-4 us (the 45 us batch cost is given)",
    },
    Param {
        key: "host_link.transfer_latency_us",
        short: "dma_us",
        kind: Kind::Real,
        shipped: 1.0,
        low: 4.0,
        high: 1.0,
        grid: &[4.0, 2.0, 1.0],
        continuous: true,
        primary: false,
        source: "assumption (uvm-turing.toml, ~1 us for a small cudaMemcpy on PCIe 3): \
                 fixed cost of one DMA transfer; 1-4 us",
    },
    Param {
        key: "fault.profiling_step_us",
        short: "profile_us",
        kind: Kind::Real,
        shipped: 2.0,
        low: 4.0,
        high: 1.0,
        grid: &[4.0, 2.0, 1.0],
        continuous: true,
        primary: false,
        source: "assumption (uvm-turing.toml): driver time of one Forest profiling step; \
                 half to twice the shipped 2 us",
    },
];

/// The Forest study's box: the GPU parameters of [`PARAMS`] that a one-chiplet GPU has
/// (all but the ring's bandwidth), then [`UVM_PARAMS`]. Primary (its corners): the warp's
/// loads in flight (how much of a fault's stall other loads hide) and the two per-batch
/// fault costs, the unknowns on the far-fault path that dominates an oversubscribed run.
pub fn forest_box() -> Vec<Param> {
    let gpu = PARAMS
        .iter()
        .filter(|p| p.key != "interconnect.total_bandwidth_gbs")
        .map(|p| Param {
            primary: p.key == "gpu.loads_in_flight_per_warp",
            ..*p
        });
    gpu.chain(UVM_PARAMS).collect()
}

/// Whether `key` is one of the UVM config's (else the GPU config's).
pub fn is_uvm_key(key: &str) -> bool {
    UVM_PARAMS.iter().any(|p| p.key == key)
}

/// The parameter of a key, if the table has it.
pub fn param(key: &str) -> Option<&'static Param> {
    PARAMS.iter().find(|p| p.key == key)
}
