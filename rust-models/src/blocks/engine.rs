//! Which engine serves each block instance of a system run (hardware in the loop).
//!
//! The system models hold every block as a [`ClockedBlock`] over a [`BlockEngine`]: the
//! behavioural twin called directly (the default, and the hottest path of a run), or any
//! other [`SystemEngine`] behind a box — rust-hdl's simulator, the emitted Verilog under
//! Verilator, or a checking engine that runs two side by side (built by `mcmvm-cosim`).
//! Both variants see the same block cycles, so a run gives the same answers whichever
//! serves. The [`Hardware`] handle in the GPU and UVM configurations names the factory.

use super::access_time_tracker::AccessTimeTracker;
use super::remote_tracker::RemoteTracker;
use super::tlb_coalescer::TlbCoalescer;
use crate::config::{AttConfig, CoalescerConfig, RtConfig};
use crate::protocol::{AttIn, AttOut, CoalIn, CoalOut, CycleModel, Ports, RtIn, RtOut};
use mcmvm_protocol::system::{
    BlockFactory, BlockFault, BoxedSystemEngine, ClockedBlock, EngineReport, Plain, SystemEngine,
};
use std::sync::Arc;

/// The engine behind one block instance: the twin without a virtual call, or anything else.
pub enum BlockEngine<T, I: Ports, O: Ports> {
    Twin(Plain<T>),
    Other(BoxedSystemEngine<I, O>),
}

impl<T, I, O> SystemEngine<I, O> for BlockEngine<T, I, O>
where
    T: CycleModel<In = I, Out = O> + Send,
    I: Ports,
    O: Ports,
{
    #[inline]
    fn step(&mut self, system_cycle: u64, input: &I) -> Result<O, BlockFault> {
        match self {
            BlockEngine::Twin(t) => t.step(system_cycle, input),
            BlockEngine::Other(e) => e.step(system_cycle, input),
        }
    }
    fn skip_idle(&mut self, from: u64, cycles: u64) -> Result<(), BlockFault> {
        match self {
            BlockEngine::Twin(_) => Ok(()),
            BlockEngine::Other(e) => e.skip_idle(from, cycles),
        }
    }
    fn sync(&mut self) -> Result<(), BlockFault> {
        match self {
            BlockEngine::Twin(_) => Ok(()),
            BlockEngine::Other(e) => e.sync(),
        }
    }
    fn report(&self) -> EngineReport {
        match self {
            BlockEngine::Twin(t) => t.report(),
            BlockEngine::Other(e) => e.report(),
        }
    }
}

/// A Remote Tracker instance in system time.
pub type RtBlock = ClockedBlock<RtIn, RtOut, BlockEngine<RemoteTracker, RtIn, RtOut>>;
/// A TLB coalescer instance in system time.
pub type CoalescerBlock = ClockedBlock<CoalIn, CoalOut, BlockEngine<TlbCoalescer, CoalIn, CoalOut>>;
/// An Access Time Tracker instance in system time.
pub type AttBlock = ClockedBlock<AttIn, AttOut, BlockEngine<AccessTimeTracker, AttIn, AttOut>>;

/// The behavioural twins for every block (the default engine).
#[derive(Debug, Clone, Copy, Default)]
pub struct TwinFactory;

impl BlockFactory for TwinFactory {
    fn name(&self) -> &str {
        "twin"
    }
    fn is_twin(&self) -> bool {
        true
    }
    fn remote_tracker(
        &self,
        cfg: &RtConfig,
        _unit: &str,
    ) -> Result<BoxedSystemEngine<RtIn, RtOut>, BlockFault> {
        Ok(Box::new(Plain::new(RemoteTracker::new(cfg), "twin")))
    }
    fn tlb_coalescer(
        &self,
        cfg: &CoalescerConfig,
        _unit: &str,
    ) -> Result<BoxedSystemEngine<CoalIn, CoalOut>, BlockFault> {
        Ok(Box::new(Plain::new(TlbCoalescer::new(cfg), "twin")))
    }
    fn access_time_tracker(
        &self,
        cfg: &AttConfig,
        _unit: &str,
    ) -> Result<BoxedSystemEngine<AttIn, AttOut>, BlockFault> {
        Ok(Box::new(Plain::new(AccessTimeTracker::new(cfg), "twin")))
    }
}

/// Which engines serve the blocks of a run: a shared [`BlockFactory`]. Not part of any
/// TOML file; the CLI's `--hw` sets it.
#[derive(Clone)]
pub struct Hardware(pub Arc<dyn BlockFactory>);

impl Default for Hardware {
    fn default() -> Hardware {
        Hardware(Arc::new(TwinFactory))
    }
}

impl std::fmt::Debug for Hardware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hardware({})", self.0.name())
    }
}

impl PartialEq for Hardware {
    fn eq(&self, other: &Hardware) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Hardware {
    /// `twin`, `rusthdl`, `verilator`, `check`.
    pub fn name(&self) -> &str {
        self.0.name()
    }

    /// The same engines with no twin predicting them, if these are predicted.
    pub fn unpredicted(&self) -> Option<Hardware> {
        self.0.unpredicted().map(Hardware)
    }

    /// Run `run` with these engines; when a twin predicting an RTL engine was wrong, run it
    /// again with the RTL serving unpredicted (`mcmvm_protocol::system::serve_predicted`).
    /// `run` gets `None` (use these engines) or the engines of the repeat; `fault` finds a
    /// block fault in its error; the second value is the failed prediction, if repeated.
    pub fn serve<T, E>(
        &self,
        run: impl Fn(Option<Hardware>) -> Result<T, E>,
        fault: impl Fn(&E) -> Option<&BlockFault>,
    ) -> Result<(T, Option<String>), E> {
        mcmvm_protocol::system::serve_predicted(&*self.0, |f| run(f.map(Hardware)), fault)
            .map(|(t, f)| (t, f.map(|f| f.to_string())))
    }

    /// The Remote Tracker of `unit` ("chiplet 2").
    pub fn remote_tracker(&self, cfg: &RtConfig, unit: String) -> Result<RtBlock, BlockFault> {
        let engine = if self.0.is_twin() {
            BlockEngine::Twin(Plain::new(RemoteTracker::new(cfg), "twin"))
        } else {
            BlockEngine::Other(self.0.remote_tracker(cfg, &unit)?)
        };
        Ok(ClockedBlock::new(
            crate::protocol::BlockKind::RemoteTracker,
            unit,
            engine,
        ))
    }

    /// The TLB coalescing logic of `unit`.
    pub fn tlb_coalescer(
        &self,
        cfg: &CoalescerConfig,
        unit: String,
    ) -> Result<CoalescerBlock, BlockFault> {
        let engine = if self.0.is_twin() {
            BlockEngine::Twin(Plain::new(TlbCoalescer::new(cfg), "twin"))
        } else {
            BlockEngine::Other(self.0.tlb_coalescer(cfg, &unit)?)
        };
        Ok(ClockedBlock::new(
            crate::protocol::BlockKind::TlbCoalescer,
            unit,
            engine,
        ))
    }

    /// The Access Time Tracker of `unit` ("UVM driver").
    pub fn access_time_tracker(
        &self,
        cfg: &AttConfig,
        unit: String,
    ) -> Result<AttBlock, BlockFault> {
        let engine = if self.0.is_twin() {
            BlockEngine::Twin(Plain::new(AccessTimeTracker::new(cfg), "twin"))
        } else {
            BlockEngine::Other(self.0.access_time_tracker(cfg, &unit)?)
        };
        Ok(ClockedBlock::new(
            crate::protocol::BlockKind::AccessTimeTracker,
            unit,
            engine,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hardware_is_named_by_who_serves_the_blocks() {
        let twins = Hardware::default();
        assert_eq!(twins.name(), "twin");
        // Configurations print (`{:?}`) which engines serve, e.g. in a failed comparison.
        assert_eq!(format!("{twins:?}"), "Hardware(twin)");
        // Nothing predicts the twins, so a mispredicted run has nothing to repeat with; a
        // predicting factory hands over its unpredicted engines (`run_on_gpu`'s repeat).
        assert!(twins.unpredicted().is_none());
        let predicted = Hardware(Arc::new(Renamed("verilator+twin", Some("verilator"))));
        let repeat = predicted
            .unpredicted()
            .expect("a predicting factory repeats");
        assert_eq!(repeat.name(), "verilator");
    }

    /// A factory that serves the twins under another name (as `check` would name itself),
    /// and, if given, names the unpredicted engines a twin predicting it would repeat with.
    struct Renamed(&'static str, Option<&'static str>);

    impl BlockFactory for Renamed {
        fn name(&self) -> &str {
            self.0
        }
        fn unpredicted(&self) -> Option<Arc<dyn BlockFactory>> {
            self.1
                .map(|name| Arc::new(Renamed(name, None)) as Arc<dyn BlockFactory>)
        }
        fn remote_tracker(
            &self,
            cfg: &RtConfig,
            unit: &str,
        ) -> Result<BoxedSystemEngine<RtIn, RtOut>, BlockFault> {
            TwinFactory.remote_tracker(cfg, unit)
        }
        fn tlb_coalescer(
            &self,
            cfg: &CoalescerConfig,
            unit: &str,
        ) -> Result<BoxedSystemEngine<CoalIn, CoalOut>, BlockFault> {
            TwinFactory.tlb_coalescer(cfg, unit)
        }
        fn access_time_tracker(
            &self,
            cfg: &AttConfig,
            unit: &str,
        ) -> Result<BoxedSystemEngine<AttIn, AttOut>, BlockFault> {
            TwinFactory.access_time_tracker(cfg, unit)
        }
    }

    /// Two handles are the same hardware when their factories have the same name, whether
    /// or not they share the factory: configurations compare equal on it.
    #[test]
    fn hardware_is_equal_by_the_factorys_name() {
        let twins = Hardware::default();
        assert!(twins == Hardware::default());
        assert!(twins == Hardware(Arc::new(Renamed("twin", None))));
        assert!(twins != Hardware(Arc::new(Renamed("check", None))));
        assert!(
            Hardware(Arc::new(Renamed("check", None)))
                == Hardware(Arc::new(Renamed("check", None)))
        );
    }
}
