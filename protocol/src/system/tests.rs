use super::*;
use crate::protocol::{RtIn, RtOut};

/// Answers a drain one cycle later (like the RT) and logs every call it gets.
#[derive(Default)]
struct Echo {
    pending: bool,
    log: Vec<String>,
}

impl SystemEngine<RtIn, RtOut> for Echo {
    fn step(&mut self, system_cycle: u64, input: &RtIn) -> Result<RtOut, BlockFault> {
        self.log
            .push(format!("step {system_cycle} {}", input.drain_valid));
        let out = RtOut {
            drain_done: self.pending as u64,
            ..RtOut::default()
        };
        self.pending = input.drain_valid == 1;
        Ok(out)
    }
    fn skip_idle(&mut self, from: u64, cycles: u64) -> Result<(), BlockFault> {
        self.log.push(format!("skip {from}+{cycles}"));
        Ok(())
    }
    fn report(&self) -> EngineReport {
        EngineReport::default()
    }
}

fn drain() -> RtIn {
    RtIn {
        drain_valid: 1,
        ..RtIn::default()
    }
}

#[test]
fn inputs_are_applied_at_their_cycle_after_two_idle_cycles_and_a_skip() {
    let mut b = ClockedBlock::new(
        BlockKind::RemoteTracker,
        "chiplet 0".into(),
        Echo::default(),
    );
    assert_eq!(
        b.step_at(10, &drain()).unwrap().0,
        10,
        "power-on state is quiescent"
    );
    let (at, out) = b.step_at(100, &drain()).unwrap();
    assert_eq!(
        (at, out.drain_done),
        (100, 0),
        "the answer came in an idle cycle"
    );
    assert_eq!(
        b.engine.log,
        [
            "skip 0+10",
            "step 10 1",
            "step 11 0",
            "step 12 0",
            "skip 13+87",
            "step 100 1"
        ]
    );
    assert_eq!(b.next_cycle(), 101);
    let r = b.report();
    assert_eq!((r.block_cycles, r.skipped_idle), (4, 97));
}

#[test]
fn two_inputs_of_one_cycle_queue_behind_each_other() {
    let mut b = ClockedBlock::new(
        BlockKind::RemoteTracker,
        "chiplet 1".into(),
        Echo::default(),
    );
    assert_eq!(b.step_at(5, &drain()).unwrap().0, 5);
    let (at, out) = b.step_at(5, &drain()).unwrap();
    assert_eq!(at, 6);
    assert_eq!(
        out.drain_done, 1,
        "the first drain answers in the second's cycle"
    );
    assert_eq!(
        b.step_at(3, &RtIn::default()).unwrap().0,
        7,
        "time never goes back"
    );
    let (at, _) = b.idle().unwrap();
    assert_eq!(at, 8);
}

#[test]
fn a_short_gap_is_stepped_not_skipped() {
    let mut b = ClockedBlock::new(BlockKind::RemoteTracker, "c".into(), Echo::default());
    b.step_at(0, &drain()).unwrap();
    b.step_at(2, &drain()).unwrap();
    assert_eq!(b.engine.log, ["step 0 1", "step 1 0", "step 2 1"]);
}

#[test]
fn faults_name_the_unit_that_raised_them() {
    struct Broken;
    impl SystemEngine<RtIn, RtOut> for Broken {
        fn step(&mut self, system_cycle: u64, _: &RtIn) -> Result<RtOut, BlockFault> {
            Err(BlockFault::NoAnswer {
                block: "remote_tracker",
                unit: String::new(),
                system_cycle,
                port: "drain_done",
                latency: 1,
            })
        }
        fn report(&self) -> EngineReport {
            EngineReport::default()
        }
    }
    let mut b = ClockedBlock::new(BlockKind::RemoteTracker, "chiplet 3".into(), Broken);
    let e = b.step_at(42, &drain()).unwrap_err().to_string();
    assert_eq!(
        e,
        "remote_tracker on chiplet 3: no `drain_done` within 1 cycle(s) of the request at \
         system cycle 42"
    );
}
