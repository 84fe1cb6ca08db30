//! # mcmvm-models — the behavioural side of mcmvm
//!
//! Everything here is plain Rust with no HDL dependency, so it is the fast path: the
//! cycle-exact twins of the three hardware blocks (`blocks`), the port-level protocol they
//! share with the RTL and the co-simulation bridge (`protocol`), and the system models —
//! the amdgpu-style page table, the MCM GPU timing model, the driver's memory manager
//! (PMM / OLP / MMA), the workloads and the UVM path (Forest, SpecForest).
//!
//! Design: each component keeps an immutable spec (serde config), a plain state, and the
//! resources it is handed; addresses and cycles are newtypes (`addr`); latency is data.

pub mod addr;
pub mod blocks;
pub mod calibrate;
pub mod characterize;
pub mod config;
pub mod driver;
pub mod figures;
pub mod gpu;
pub mod pagetable;
pub mod pte;
pub mod stats;
pub mod uvm;
pub mod workload;

/// The port protocol, shared with the RTL through `mcmvm-protocol`.
pub use mcmvm_protocol::protocol;
/// Block engines inside system runs (hardware in the loop).
pub use mcmvm_protocol::system;
