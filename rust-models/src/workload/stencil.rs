//! Structured-grid kernels: `ste` (Parboil 7-point stencil), `3dc` (PolyBench 3D
//! convolution), `lps` (3D Laplace, Jacobi). All fp32, x fastest in memory.
//!
//! Their thread blocks cover a band of rows of each z plane, and consecutive blocks cover
//! consecutive bands, so under first-touch placement each chiplet owns one contiguous
//! slice *per plane*: a region smaller than 2 MB that repeats every plane. That is the
//! chiplet-locality CLAP measures, and why 2 MB pages hurt these workloads.

use super::program::{after, check_scale, coalesced, grid_u32, scaled, Program, WarpGen, WARP};
use super::{Allocation, Kernel, WarpInstr, WarpStream, Workload, WorkloadError};

/// Which of the three grid programs.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// One thread block per y row (16 warps across x), marching z with a register window.
    Ste,
    /// One kernel per interior plane i; 32×8 thread blocks tile (k, j).
    Conv3d,
    /// 32×4 thread blocks tile (x, y) and march z; Dirichlet boundaries.
    Laplace,
}

struct GridGen {
    kind: Kind,
    nx: u64,
    ny: u64,
    nz: u64,
    /// Thread blocks along x (the fastest TB index).
    gx: u64,
    /// Warps per thread block.
    warps: u64,
}

/// Names of the stencil workloads.
#[cfg(test)]
pub(crate) const NAMES: [&str; 3] = ["ste", "3dc", "lps"];

/// Jacobi sweeps of `ste` and `lps` (ping-pong between two grids).
const SWEEPS: u32 = 4;

/// Build `ste`, `3dc` or `lps`.
pub(crate) fn build(name: &str, scale: f64) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let kind = match name {
        "ste" => Kind::Ste,
        "3dc" => Kind::Conv3d,
        "lps" => Kind::Laplace,
        _ => return None,
    };
    Some(build_kind(name, kind, scale))
}

fn build_kind(name: &str, kind: Kind, scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale(name, scale)?;
    // Planes are what --scale multiplies: the per-plane layout (and so the size of each
    // chiplet's slice) stays that of the benchmark.
    let (nx, ny, nz, gx, gy, warps) = match kind {
        Kind::Ste => (512, 512, scaled(name, scale, 32, 1, 3)?, 1, 512, 16),
        Kind::Conv3d => (512, 512, scaled(name, scale, 32, 1, 3)?, 16, 64, 8),
        Kind::Laplace => (256, 256, scaled(name, scale, 64, 1, 3)?, 8, 64, 4),
    };
    let grid = grid_u32(name, scale, gx * gy)?;
    let bytes = nx * ny * nz * 4;
    let (allocations, kernels, what) = match kind {
        Kind::Ste => (
            vec![
                Allocation::new("grid_a", bytes),
                Allocation::new("grid_b", bytes),
            ],
            (0..SWEEPS)
                .map(|_| Kernel::new("stencil7", grid, warps as u32))
                .collect(),
            format!("Parboil 7-point stencil {nx}x{ny}x{nz}, {SWEEPS} sweeps"),
        ),
        Kind::Conv3d => (
            vec![Allocation::new("A", bytes), Allocation::new("B", bytes)],
            (1..nz - 1)
                .map(|_| Kernel::new("conv3d", grid, warps as u32))
                .collect(),
            format!("PolyBench 3D convolution {nz}x{ny}x{nx}, one kernel per plane"),
        ),
        Kind::Laplace => (
            vec![Allocation::new("u1", bytes), Allocation::new("u2", bytes)],
            (0..SWEEPS)
                .map(|_| Kernel::new("laplace3d", grid, warps as u32))
                .collect(),
            format!("3D Laplace Jacobi {nx}x{ny}x{nz}, {SWEEPS} sweeps"),
        ),
    };
    Ok(Box::new(Program {
        name: name.to_string(),
        description: what,
        allocations,
        kernels,
        gen: GridGen {
            kind,
            nx,
            ny,
            nz,
            gx,
            warps,
        },
    }))
}

/// PolyBench 3DCONV's fifteen loads, (di, dj, dk), in the order the kernel issues them.
const CONV_TAPS: [(i64, i64, i64); 15] = [
    (-1, -1, -1),
    (1, -1, -1),
    (-1, -1, -1),
    (1, -1, -1),
    (-1, -1, -1),
    (1, -1, -1),
    (0, -1, 0),
    (0, 0, 0),
    (0, 1, 0),
    (-1, -1, 1),
    (1, -1, 1),
    (-1, 0, 1),
    (1, 0, 1),
    (-1, 1, 1),
    (1, 1, 1),
];

impl GridGen {
    /// Byte offset of element (x, y, z).
    #[inline]
    fn at(&self, x: u64, y: u64, z: u64) -> u64 {
        ((z * self.ny + y) * self.nx + x) * 4
    }

    /// (input, output) allocation of a ping-pong sweep.
    fn io(kernel: usize) -> (u16, u16) {
        if kernel.is_multiple_of(2) {
            (0, 1)
        } else {
            (1, 0)
        }
    }

    fn ste(&self, kernel: usize, tb: u64, w: u64) -> WarpStream<'_> {
        let (src, dst) = Self::io(kernel);
        let (y, x0) = (tb, w * WARP);
        let interior = y > 0 && y + 1 < self.ny;
        let row = move |yy: u64, z: u64, write: bool| {
            coalesced(
                if write { dst } else { src },
                self.at(x0, yy, z),
                WARP,
                4,
                write,
            )
        };
        let prologue = interior
            .then(|| [row(y, 0, false), row(y, 1, false)])
            .into_iter()
            .flatten();
        let body = (1..self.nz - 1).flat_map(move |z| {
            let mut v: [Option<WarpInstr>; 4] = Default::default();
            if interior {
                v[0] = Some(row(y, z + 1, false));
                v[1] = Some(row(y - 1, z, false));
                v[2] = Some(row(y + 1, z, false));
            } else {
                v[0] = Some(row(y, z, false));
            }
            v[3] = Some(after(row(y, z, true), 8));
            v.into_iter().flatten()
        });
        Box::new(prologue.chain(body))
    }

    fn conv3d(&self, kernel: usize, tb: u64, w: u64) -> WarpStream<'_> {
        let i = kernel as u64 + 1;
        let (bx, by) = (tb % self.gx, tb / self.gx);
        let j = by * self.warps + w;
        let k0 = bx * WARP;
        let lo = k0.max(1);
        let hi = (k0 + WARP).min(self.nx - 1);
        if j == 0 || j + 1 >= self.ny || lo >= hi {
            return Box::new(std::iter::empty());
        }
        let lanes = hi - lo;
        let loads = CONV_TAPS.iter().map(move |&(di, dj, dk)| {
            let off = self.at(
                (lo as i64 + dk) as u64,
                (j as i64 + dj) as u64,
                (i as i64 + di) as u64,
            );
            coalesced(0, off, lanes, 4, false)
        });
        Box::new(loads.chain(std::iter::once(after(
            coalesced(1, self.at(lo, j, i), lanes, 4, true),
            30,
        ))))
    }

    fn laplace(&self, kernel: usize, tb: u64, w: u64) -> WarpStream<'_> {
        let (src, dst) = Self::io(kernel);
        let (bx, by) = (tb % self.gx, tb / self.gx);
        let j = by * self.warps + w;
        let i0 = bx * WARP;
        // Interior lanes: i in [lo, hi); the others load only their own point.
        let lo = i0.max(1);
        let hi = (i0 + WARP).min(self.nx - 1);
        let edge_lanes: Vec<u64> = [i0, i0 + WARP - 1]
            .into_iter()
            .filter(|&i| i == 0 || i == self.nx - 1)
            .collect();
        Box::new((0..self.nz).flat_map(move |k| {
            let boundary_plane = j == 0 || j + 1 == self.ny || k == 0 || k + 1 == self.nz;
            let mut v: Vec<WarpInstr> = Vec::with_capacity(8);
            if boundary_plane {
                v.push(coalesced(src, self.at(i0, j, k), WARP, 4, false));
            } else {
                let n = hi - lo;
                for (dx, dy, dz) in [
                    (-1i64, 0i64, 0i64),
                    (1, 0, 0),
                    (0, -1, 0),
                    (0, 1, 0),
                    (0, 0, -1),
                    (0, 0, 1),
                ] {
                    let off = self.at(
                        (lo as i64 + dx) as u64,
                        (j as i64 + dy) as u64,
                        (k as i64 + dz) as u64,
                    );
                    v.push(coalesced(src, off, n, 4, false));
                }
                for &i in &edge_lanes {
                    v.push(coalesced(src, self.at(i, j, k), 1, 4, false));
                }
            }
            v.push(after(coalesced(dst, self.at(i0, j, k), WARP, 4, true), 6));
            v.into_iter()
        }))
    }
}

impl WarpGen for GridGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (tb, w) = (tb as u64, warp as u64);
        match self.kind {
            Kind::Ste => self.ste(kernel, tb, w),
            Kind::Conv3d => self.conv3d(kernel, tb, w),
            Kind::Laplace => self.laplace(kernel, tb, w),
        }
    }

    fn count(&self) -> u64 {
        let (nx, ny, nz) = (self.nx, self.ny, self.nz);
        match self.kind {
            Kind::Ste => {
                let warps = nx / WARP;
                let interior = (ny - 2) * warps * (2 + (nz - 2) * 4);
                let boundary = 2 * warps * (nz - 2) * 2;
                (interior + boundary) * SWEEPS as u64
            }
            // Every warp of an interior row issues 15 loads and a store per plane.
            Kind::Conv3d => (nz - 2) * (ny - 2) * (nx / WARP) * 16,
            Kind::Laplace => {
                let warps_per_row = nx / WARP;
                let inner_rows = (ny - 2) * (nz - 2);
                let edge_rows = ny * nz - inner_rows;
                // Two warps per row hold one boundary lane each (i = 0 and i = nx - 1).
                let per_sweep =
                    edge_rows * warps_per_row * 2 + inner_rows * (warps_per_row * 7 + 2);
                per_sweep * SWEEPS as u64
            }
        }
    }
}
