//! The driver's side of the Access Time Tracker: it talks to the block only through
//! `CycleModel::step` with the `AttIn` / `AttOut` ports, so the behavioural twin, the
//! reference model or the RTL can sit behind it.
//!
//! Outputs are consumed as a stream whatever cycle they appear in (the block may take
//! more than one cycle); after a driver command a few idle cycles drain the pipeline.

use crate::blocks::access_time_tracker::AccessTimeTracker;
use crate::config::AttConfig;
use crate::protocol::{AttIn, AttOut, CycleModel};

use super::att_ref::ReferenceAtt;

/// The block behind the port: the behavioural twin is called directly (every GPU page
/// access steps it, and through a `dyn` call none of the idle input ports could be
/// optimised away); anything else — the reference model, an RTL engine — sits behind a
/// trait object. Both see only `step` with the `AttIn` / `AttOut` ports.
pub enum AttBlock {
    Twin(Box<AccessTimeTracker>),
    Other(Box<dyn CycleModel<In = AttIn, Out = AttOut> + Send>),
}

impl AttBlock {
    #[inline]
    fn step(&mut self, input: &AttIn) -> AttOut {
        match self {
            AttBlock::Twin(t) => t.step(input),
            AttBlock::Other(b) => b.step(input),
        }
    }
}

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
    /// Which engine answered the start-up probe (`twin` or `reference`).
    pub engine: &'static str,
    /// Latest `oldest_obj` output, if valid.
    oldest: Option<u8>,
    pub cycles: u64,
}

impl AttPort {
    /// The block's twin if it answers a probe access, else the reference model.
    pub fn new(cfg: &AttConfig) -> AttPort {
        let mut twin = AttPort::with_block(
            AttBlock::Twin(Box::new(AccessTimeTracker::new(cfg))),
            "twin",
        );
        if twin.probe() {
            let mut fresh = AttPort::with_block(
                AttBlock::Twin(Box::new(AccessTimeTracker::new(cfg))),
                "twin",
            );
            fresh.reset();
            return fresh;
        }
        AttPort::with_block(
            AttBlock::Other(Box::new(ReferenceAtt::new(cfg))),
            "reference",
        )
    }

    /// Drive a given block (tests, hardware in the loop).
    pub fn with_block(block: AttBlock, engine: &'static str) -> AttPort {
        AttPort {
            block,
            engine,
            oldest: None,
            cycles: 0,
        }
    }

    /// Does the block produce a record for an access inside a registered range?
    fn probe(&mut self) -> bool {
        struct Seen(bool);
        impl AttSink for Seen {
            fn record(&mut self, _: AttRecord) {
                self.0 = true;
            }
            fn interrupt(&mut self, _: u8) {}
        }
        let mut seen = Seen(false);
        self.reset();
        self.register(0, 16, 31, &mut seen);
        self.access(20, &mut seen);
        self.idle(&mut seen, DRAIN_CYCLES);
        seen.0
    }

    #[inline]
    fn step<S: AttSink + ?Sized>(&mut self, input: &AttIn, sink: &mut S) {
        let out = self.block.step(input);
        self.cycles += 1;
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
        self.oldest = (out.oldest_valid == 1).then_some(out.oldest_obj as u8);
    }

    fn idle(&mut self, sink: &mut dyn AttSink, cycles: usize) {
        for _ in 0..cycles {
            self.step(&AttIn::default(), sink);
        }
    }

    /// Synchronous reset, then drain.
    pub fn reset(&mut self) {
        struct Drop;
        impl AttSink for Drop {
            fn record(&mut self, _: AttRecord) {}
            fn interrupt(&mut self, _: u8) {}
        }
        self.step(
            &AttIn {
                reset: 1,
                ..Default::default()
            },
            &mut Drop,
        );
        self.idle(&mut Drop, DRAIN_CYCLES);
        self.oldest = None;
    }

    /// One GPU memory access to a 4 KB page.
    #[inline]
    pub fn access<S: AttSink + ?Sized>(&mut self, vpn: u64, sink: &mut S) {
        self.step(
            &AttIn {
                acc_valid: 1,
                acc_vpn: vpn,
                ..Default::default()
            },
            sink,
        );
    }

    /// Register object `obj` for `start_vpn ..= end_vpn` (timer restarts at 0).
    pub fn register(&mut self, obj: u8, start_vpn: u64, end_vpn: u64, sink: &mut dyn AttSink) {
        self.step(
            &AttIn {
                reg_valid: 1,
                reg_obj: obj as u64,
                reg_start_vpn: start_vpn,
                reg_end_vpn: end_vpn,
                ..Default::default()
            },
            sink,
        );
        self.idle(sink, DRAIN_CYCLES);
    }

    /// Stop profiling interrupts for `obj`.
    pub fn cease(&mut self, obj: u8, sink: &mut dyn AttSink) {
        self.step(
            &AttIn {
                cease_valid: 1,
                cease_obj: obj as u64,
                ..Default::default()
            },
            sink,
        );
        self.idle(sink, DRAIN_CYCLES);
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
        let mut att = AttPort::with_block(
            AttBlock::Other(Box::new(ReferenceAtt::new(&cfg))),
            "reference",
        );
        let mut log = Log::default();
        att.register(0, 100, 199, &mut log);
        att.register(1, 200, 299, &mut log);
        for vpn in [100, 101, 250, 102] {
            att.access(vpn, &mut log);
        }
        let timers: Vec<(u8, u32)> = log.recs.iter().map(|r| (r.obj, r.timer)).collect();
        assert_eq!(timers, vec![(0, 1), (0, 2), (1, 1), (0, 3)]);
        assert_eq!(log.irqs, vec![0]);
        assert_eq!(att.oldest(&mut log), Some(1));
        att.cease(0, &mut log);
        for _ in 0..3 {
            att.access(150, &mut log);
        }
        assert_eq!(log.irqs, vec![0], "ceased object raises no interrupt");
    }
}
