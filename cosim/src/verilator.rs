//! The Verilator engine: the emitted Verilog of a block, compiled by `build.rs` into a
//! C++ model with a generated `extern "C"` shim, stepped through this FFI wrapper.
//!
//! The model is compiled for the parameters in `configs/hw.toml` at build time; asking for
//! other parameters at run time is an error, never a silent mismatch.

use crate::error::CosimError;
use mcmvm_models::config::{parse_toml, HwConfig};
use mcmvm_models::protocol::{BlockKind, CycleModel, Ports};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::path::Path;

/// The block parameters the Verilator models were compiled for.
const BUILT_HW_TOML: &str = include_str!(concat!(env!("OUT_DIR"), "/hw_built.toml"));

/// Entry points of one block's compiled model.
struct Bridge {
    new: unsafe extern "C" fn() -> *mut c_void,
    step: unsafe extern "C" fn(*mut c_void, *const u64, *mut u64),
    free: unsafe extern "C" fn(*mut c_void),
    /// Ports the shim was generated for (`in:name/width,...;out:...`).
    signature: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/verilator_bindings.rs"));

/// The parameters compiled into the Verilator models.
pub fn built_config() -> HwConfig {
    // Written by build.rs from a validated HwConfig, so it parses; fall back to the
    // defaults rather than panic if it somehow does not.
    parse_toml(BUILT_HW_TOML, Path::new("hw_built.toml")).unwrap_or_default()
}

/// A block's Verilator model behind the protocol's `CycleModel`.
pub struct VerilatorModel<I: Ports, O: Ports> {
    handle: *mut c_void,
    bridge: Bridge,
    in_words: Vec<u64>,
    out_words: Vec<u64>,
    _ports: PhantomData<(I, O)>,
}

impl<I: Ports, O: Ports> VerilatorModel<I, O> {
    /// Instantiate the model of `kind`; `cfg` must equal the parameters it was built for.
    pub fn new(kind: BlockKind, cfg: &HwConfig) -> Result<Self, CosimError> {
        let module = kind.module_name();
        let bridge = bridge_for(kind).map_err(|reason| {
            if reason.starts_with("verilator not found") {
                CosimError::ToolMissing(reason.to_string())
            } else {
                CosimError::VerilatorUnavailable {
                    module,
                    reason: reason.to_string(),
                }
            }
        })?;
        check_same_parameters(kind, cfg)?;
        let expected = signature_of::<I, O>();
        if bridge.signature != expected {
            return Err(CosimError::PortMismatch {
                module,
                built: bridge.signature.to_string(),
                expected,
            });
        }
        // SAFETY: `new` is the generated shim's constructor; it takes no arguments and
        // returns an owned handle that only `free` releases (in Drop).
        let handle = unsafe { (bridge.new)() };
        Ok(VerilatorModel {
            handle,
            bridge,
            in_words: vec![0; I::PORTS.len()],
            out_words: vec![0; O::PORTS.len()],
            _ports: PhantomData,
        })
    }
}

impl<I: Ports, O: Ports> CycleModel for VerilatorModel<I, O> {
    type In = I;
    type Out = O;
    fn step(&mut self, input: &I) -> O {
        for (i, w) in self.in_words.iter_mut().enumerate() {
            *w = input.get(i);
        }
        // SAFETY: the handle is live (freed only in Drop); the shim reads exactly
        // `I::PORTS.len()` words and writes `O::PORTS.len()` words, which the port
        // signature check in `new` guarantees match these buffers.
        unsafe {
            (self.bridge.step)(
                self.handle,
                self.in_words.as_ptr(),
                self.out_words.as_mut_ptr(),
            )
        };
        let mut out = O::default();
        for (i, &w) in self.out_words.iter().enumerate() {
            out.set(i, w);
        }
        out
    }
}

impl<I: Ports, O: Ports> Drop for VerilatorModel<I, O> {
    fn drop(&mut self) {
        // SAFETY: the handle came from `new` and is released exactly once.
        unsafe { (self.bridge.free)(self.handle) }
    }
}

/// The signature format of `build/shim.rs` for the protocol this crate is compiled with.
fn signature_of<I: Ports, O: Ports>() -> String {
    let list = |ports: &[mcmvm_models::protocol::PortDesc]| {
        ports
            .iter()
            .map(|p| format!("{}/{}", p.name, p.width))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!("in:{};out:{}", list(I::PORTS), list(O::PORTS))
}

/// The Verilog is elaborated for one parameter set; only the block's own section matters.
fn check_same_parameters(kind: BlockKind, cfg: &HwConfig) -> Result<(), CosimError> {
    let built = built_config();
    let (b, r) = match kind {
        BlockKind::RemoteTracker => (
            format!("{:?}", built.remote_tracker),
            format!("{:?}", cfg.remote_tracker),
        ),
        BlockKind::TlbCoalescer => (
            format!("{:?}", built.tlb_coalescer),
            format!("{:?}", cfg.tlb_coalescer),
        ),
        BlockKind::AccessTimeTracker => (
            format!("{:?}", built.access_time_tracker),
            format!("{:?}", cfg.access_time_tracker),
        ),
    };
    if b == r {
        Ok(())
    } else {
        Err(CosimError::ConfigMismatch {
            module: kind.module_name(),
            built: b,
            requested: r,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcmvm_models::protocol::{RtIn, RtOut};

    #[test]
    fn other_parameters_than_the_built_ones_are_refused() {
        let mut cfg = built_config();
        cfg.remote_tracker.entries = if cfg.remote_tracker.entries == 16 {
            8
        } else {
            16
        };
        match VerilatorModel::<RtIn, RtOut>::new(BlockKind::RemoteTracker, &cfg) {
            Err(CosimError::ConfigMismatch { module, .. }) => assert_eq!(module, "remote_tracker"),
            Err(CosimError::ToolMissing(_)) | Err(CosimError::VerilatorUnavailable { .. }) => {}
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("a model built for other parameters was accepted"),
        }
    }
}
