//! Tango's recurrent networks as general-purpose workloads of the Forest study:
//! `tango-gru` and `tango-lstm`. The choice of benchmarks (and the two of Tango's six
//! networks) is ours; see `docs/workloads-forest.md`.
//!
//! One cell kernel per time step, one thread per hidden unit `i` (256-thread blocks): the
//! thread accumulates its gates' pre-activations over the input `x_t` and then over the
//! previous hidden state `h_{t-1}` (`Σ_j W_g[j][i] x_t[j]`, `Σ_j U_g[j][i] h_{t-1}[j]`), and
//! writes `h_t[i]` (the LSTM also reads and writes its cell state `c[i]`). Every gate's
//! weight matrix is its own allocation, stored input-major (`[j][i]`) so that a warp's 32
//! hidden units read one coalesced row segment; `x_t[j]` and `h_{t-1}[j]` are one word for
//! every lane. So each step streams every weight matrix once, in the same order: under
//! oversubscription the weights are re-fetched each step.
//!
//! Shapes (ours; Tango's own GRU and LSTM are far smaller than a GPU's memory): input and
//! hidden size 2048, 4 time steps, one layer, fp32. `--scale` multiplies the weights' area.

use super::program::{after, check_scale, coalesced, grid_u32, scaled, Program, WarpGen, WARP};
use super::uvmbench::uniform;
use super::{AllocIndex, Allocation, Kernel, WarpStream, Workload, WorkloadError};

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 2] = ["tango-gru", "tango-lstm"];

const STEPS: u64 = 4;
const TB: u64 = 256;
/// Compute cycles of a gate's multiply-add (ours).
const FMA_CYCLES: u32 = 2;
/// Compute cycles of the gate nonlinearities before `h_t` is stored (ours).
const CELL_CYCLES: u32 = 40;

struct RnnGen {
    /// Input size = hidden size.
    n: u64,
    /// Gates: 3 (GRU: z, r, n) or 4 (LSTM: i, f, g, o).
    gates: u16,
}

impl RnnGen {
    // Allocations: W_g (gates), U_g (gates), x, h, then the LSTM's c.
    fn w(&self, g: u16) -> AllocIndex {
        g
    }
    fn u(&self, g: u16) -> AllocIndex {
        self.gates + g
    }
    fn x(&self) -> AllocIndex {
        2 * self.gates
    }
    fn h(&self) -> AllocIndex {
        2 * self.gates + 1
    }
    fn c(&self) -> Option<AllocIndex> {
        (self.gates == 4).then_some(2 * self.gates + 2)
    }
}

/// Build `tango-gru` or `tango-lstm`.
pub(crate) fn build(name: &str, scale: f64) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let (gates, labels, cell): (u16, &[&str], &str) = match name {
        "tango-gru" => (3, &["z", "r", "n"], "gru_cell"),
        "tango-lstm" => (4, &["i", "f", "g", "o"], "lstm_cell"),
        _ => return None,
    };
    Some(build_rnn(name, scale, gates, labels, cell))
}

fn build_rnn(
    name: &str,
    scale: f64,
    gates: u16,
    labels: &[&str],
    cell: &str,
) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale(name, scale)?;
    let n = scaled(name, scale.sqrt(), 2048, TB, TB)?;
    let gen = RnnGen { n, gates };
    let mut allocations: Vec<Allocation> = Vec::new();
    for prefix in ["W", "U"] {
        allocations.extend(labels.iter().map(|g| {
            // Every gate matrix is read with the same index expression `M[j*N + i]`.
            Allocation::new(format!("{prefix}_{g}"), n * n * 4)
                .with_stride(1)
                .in_group(0)
        }));
    }
    allocations.push(Allocation::new("x", STEPS * n * 4).with_stride(1));
    allocations.push(Allocation::new("h", (STEPS + 1) * n * 4).with_stride(1));
    if gen.c().is_some() {
        allocations.push(Allocation::new("c", n * 4).with_stride(1));
    }
    let grid = grid_u32(name, scale, n / TB)?;
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "Tango {}: input = hidden = {n} fp32, {STEPS} time steps, one cell kernel per step",
            if gates == 3 { "GRU" } else { "LSTM" }
        ),
        allocations,
        kernels: (0..STEPS)
            .map(|_| Kernel::new(cell, grid, (TB / WARP) as u32))
            .collect(),
        gen,
    }))
}

impl WarpGen for RnnGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (n, t) = (self.n, kernel as u64);
        let i0 = (tb as u64 * (TB / WARP) + warp as u64) * WARP;
        // j over the input (x_t, W) and then over the previous hidden state (h_{t-1}, U).
        let body = (0..2 * n).flat_map(move |s| {
            let (j, recurrent) = (s % n, s >= n);
            let operand = if recurrent {
                uniform(self.h(), (t * n + j) * 4)
            } else {
                uniform(self.x(), (t * n + j) * 4)
            };
            std::iter::once(operand).chain((0..self.gates).map(move |g| {
                let m = if recurrent { self.u(g) } else { self.w(g) };
                after(coalesced(m, (j * n + i0) * 4, WARP, 4, false), FMA_CYCLES)
            }))
        });
        let h_out = after(
            coalesced(self.h(), ((t + 1) * n + i0) * 4, WARP, 4, true),
            CELL_CYCLES,
        );
        let tail: Vec<_> = match self.c() {
            Some(c) => vec![
                coalesced(c, i0 * 4, WARP, 4, false),
                coalesced(c, i0 * 4, WARP, 4, true),
                h_out,
            ],
            None => vec![h_out],
        };
        Box::new(body.chain(tail))
    }
    fn count(&self) -> u64 {
        let warps = self.n / WARP;
        let tail = if self.c().is_some() { 3 } else { 1 };
        STEPS * warps * (2 * self.n * (1 + self.gates as u64) + tail)
    }
    fn kernel_objects(&self, _kernel: usize) -> Option<Vec<AllocIndex>> {
        let last = if self.c().is_some() {
            2 * self.gates + 3
        } else {
            2 * self.gates + 2
        };
        Some((0..last).collect())
    }
}
