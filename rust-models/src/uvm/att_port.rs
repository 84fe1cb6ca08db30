//! The driver's side of the Access Time Tracker: it talks to the block only through its
//! `AttIn` / `AttOut` ports, as a [`ClockedBlock`] in system time, so the behavioural twin,
//! the reference model, rust-hdl's simulator or the emitted Verilog under Verilator can
//! serve (`UvmConfig::engines`).
//!
//! Outputs are consumed as a stream whatever cycle they appear in (the block answers one
//! cycle after its inputs; the idle cycles between two inputs deliver the last one's
//! outputs); after a driver command a few idle cycles drain the pipeline.

use crate::blocks::engine::{AttBlock, BlockEngine, Hardware};
use crate::config::AttConfig;
use crate::protocol::{AttIn, AttOut, BlockKind};
use mcmvm_protocol::system::{BlockFault, BlockReport, ClockedBlock, Plain};

use super::att_ref::ReferenceAtt;

/// Idle cycles stepped after a driver command so that pipelined outputs come out.
const DRAIN_CYCLES: usize = 4;

/// One (object, page, timer) record from the block's record port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttRecord {
    pub obj: u8,
    pub vpn: u64,
    pub timer: u32,
}

/// What the ATT reported since the driver last looked.
pub trait AttSink {
    fn record(&mut self, rec: AttRecord);
    fn interrupt(&mut self, obj: u8);
}

/// Port-level driver of one ATT.
pub struct AttPort {
    block: AttBlock,
    /// Which engine serves (`twin`, `reference`, `rusthdl`, `verilator`, `check`).
    pub engine: String,
    /// Latest `oldest_obj` output, if valid.
    oldest: Option<u8>,
    /// The first block fault; the run reads it with [`AttPort::take_fault`].
    fault: Option<BlockFault>,
}

impl AttPort {
    /// The ATT served by `hw`'s engine.
    pub fn new(cfg: &AttConfig, hw: &Hardware) -> Result<AttPort, BlockFault> {
        let block = hw.access_time_tracker(cfg, "UVM driver".to_string())?;
        let mut port = AttPort::with_block(block, hw.name());
        port.reset();
        Ok(port)
    }

    /// The reference model of `att_ref` behind the ports (tests).
    pub fn reference(cfg: &AttConfig) -> AttPort {
        let engine = BlockEngine::Other(Box::new(Plain::new(ReferenceAtt::new(cfg), "reference")));
        AttPort::with_block(
            ClockedBlock::new(BlockKind::AccessTimeTracker, "UVM driver".into(), engine),
            "reference",
        )
    }

    /// Drive a given block.
    pub fn with_block(block: AttBlock, engine: &str) -> AttPort {
        AttPort {
            block,
            engine: engine.to_string(),
            oldest: None,
            fault: None,
        }
    }

    /// Block cycles stepped so far.
    pub fn cycles(&self) -> u64 {
        self.block.report().block_cycles
    }

    /// This instance's line of the run's hardware report.
    pub fn report(&self) -> BlockReport {
        self.block.report()
    }

    /// The first fault the block raised, if any (the run stops with it).
    pub fn take_fault(&mut self) -> Option<BlockFault> {
        self.fault.take()
    }

    fn consume<S: AttSink + ?Sized>(oldest: &mut Option<u8>, out: &AttOut, sink: &mut S) {
        if out.rec_valid == 1 {
            sink.record(AttRecord {
                obj: out.rec_obj as u8,
                vpn: out.rec_vpn,
                timer: out.rec_timer as u32,
            });
        }
        if out.irq_valid == 1 {
            sink.interrupt(out.irq_obj as u8);
        }
        *oldest = (out.oldest_valid == 1).then_some(out.oldest_obj as u8);
    }

    /// One input at system cycle `at` (or the block's next free cycle); every output of the
    /// idle cycles before it and of its own cycle goes to `sink`.
    #[inline]
    fn step<S: AttSink + ?Sized>(&mut self, at: u64, input: &AttIn, sink: &mut S) {
        if self.fault.is_some() {
            return;
        }
        let oldest = &mut self.oldest;
        let r = self
            .block
            .step_at_with(at, input, &mut |_, out| Self::consume(oldest, out, sink));
        match r {
            Ok((_, out)) => Self::consume(&mut self.oldest, &out, sink),
            Err(f) => self.fault = Some(f),
        }
    }

    fn idle(&mut self, sink: &mut dyn AttSink, cycles: usize) {
        for _ in 0..cycles {
            let at = self.block.next_cycle();
            self.step(at, &AttIn::default(), sink);
        }
    }

    /// Synchronous reset, then drain.
    pub fn reset(&mut self) {
        struct Drop;
        impl AttSink for Drop {
            fn record(&mut self, _: AttRecord) {}
            fn interrupt(&mut self, _: u8) {}
        }
        let at = self.block.next_cycle();
        self.step(
            at,
            &AttIn {
                reset: 1,
                ..Default::default()
            },
            &mut Drop,
        );
        self.idle(&mut Drop, DRAIN_CYCLES);
        self.oldest = None;
    }

    /// One GPU memory access to a 4 KB page at system cycle `at`.
    #[inline]
    pub fn access<S: AttSink + ?Sized>(&mut self, at: u64, vpn: u64, sink: &mut S) {
        self.step(
            at,
            &AttIn {
                acc_valid: 1,
                acc_vpn: vpn,
                ..Default::default()
            },
            sink,
        );
    }

    /// A driver command at the block's next cycle, then the pipeline drained.
    fn command(&mut self, input: AttIn, sink: &mut dyn AttSink) {
        let at = self.block.next_cycle();
        self.step(at, &input, sink);
        self.idle(sink, DRAIN_CYCLES);
    }

    /// Register object `obj` for `start_vpn ..= end_vpn` (timer restarts at 0).
    pub fn register(&mut self, obj: u8, start_vpn: u64, end_vpn: u64, sink: &mut dyn AttSink) {
        let input = AttIn {
            reg_valid: 1,
            reg_obj: obj as u64,
            reg_start_vpn: start_vpn,
            reg_end_vpn: end_vpn,
            ..Default::default()
        };
        self.command(input, sink);
    }

    /// Remove object `obj` from the table (its kernel ended).
    pub fn remove(&mut self, obj: u8, sink: &mut dyn AttSink) {
        let input = AttIn {
            rm_valid: 1,
            rm_obj: obj as u64,
            ..Default::default()
        };
        self.command(input, sink);
    }

    /// Stop profiling interrupts for `obj`.
    pub fn cease(&mut self, obj: u8, sink: &mut dyn AttSink) {
        let input = AttIn {
            cease_valid: 1,
            cease_obj: obj as u64,
            ..Default::default()
        };
        self.command(input, sink);
    }

    /// Idle cycles until every output of the last input has come out (a kernel's end).
    /// Also the point where a checking engine has compared every cycle so far.
    pub fn drain(&mut self, sink: &mut dyn AttSink) {
        self.idle(sink, DRAIN_CYCLES);
        self.sync();
    }

    /// Wait until a checking engine has compared every cycle so far (the end of a run);
    /// its fault, if any, is then [`AttPort::take_fault`]'s.
    pub fn sync(&mut self) {
        if self.fault.is_none() {
            self.fault = self.block.sync().err();
        }
    }

    /// The least recently accessed registered object, as the block last reported it.
    pub fn oldest(&mut self, sink: &mut dyn AttSink) -> Option<u8> {
        self.idle(sink, 1);
        self.oldest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log {
        recs: Vec<AttRecord>,
        irqs: Vec<u8>,
    }
    impl AttSink for Log {
        fn record(&mut self, r: AttRecord) {
            self.recs.push(r);
        }
        fn interrupt(&mut self, o: u8) {
            self.irqs.push(o);
        }
    }

    #[test]
    fn reference_records_timers_recency_and_interrupts() {
        let cfg = AttConfig {
            profiling_threshold: 3,
            ..AttConfig::default()
        };
        let mut att = AttPort::reference(&cfg);
        let mut log = Log::default();
        att.register(0, 100, 199, &mut log);
        att.register(1, 200, 299, &mut log);
        for vpn in [100, 101, 250, 102] {
            att.access(0, vpn, &mut log);
        }
        let timers: Vec<(u8, u32)> = log.recs.iter().map(|r| (r.obj, r.timer)).collect();
        assert_eq!(timers, vec![(0, 1), (0, 2), (1, 1), (0, 3)]);
        assert_eq!(log.irqs, vec![0]);
        assert_eq!(att.oldest(&mut log), Some(1));
        att.cease(0, &mut log);
        for _ in 0..3 {
            att.access(0, 150, &mut log);
        }
        assert_eq!(log.irqs, vec![0], "ceased object raises no interrupt");
    }
}
