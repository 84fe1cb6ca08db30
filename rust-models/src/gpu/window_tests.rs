//! `Window` against a plain `Vec` in arrival order whose finishes are one full scan from
//! `free_at` (`max(previous finish, arrival) + cost`) every time one is read.

use super::*;
use proptest::prelude::*;

#[derive(Default)]
struct Model {
    slots: Vec<Slot>,
    free_at: f64,
    late: f64,
}

impl Model {
    /// Every slot's current finish, scanned from `free_at`.
    fn finishes(&self) -> Vec<f64> {
        let mut finish = self.free_at;
        let scan = |s: &Slot| {
            finish = finish.max(s.arrival as f64) + s.cost;
            finish
        };
        self.slots.iter().map(scan).collect()
    }

    fn admit(&mut self, now: u64, cost: f64) -> (f64, bool) {
        let pos = self.slots.partition_point(|s| s.arrival <= now);
        let before = pos
            .checked_sub(1)
            .map_or(self.free_at, |p| self.finishes()[p]);
        let start = before.max(now as f64);
        let finish = start + cost;
        let slot = Slot {
            arrival: now,
            cost,
            finish,
            answered: finish,
        };
        self.slots.insert(pos, slot);
        (start, pos + 1 < self.slots.len())
    }

    fn retire(&mut self, floor: u64) {
        let finishes = self.finishes();
        let n = self.slots.iter().take_while(|s| s.arrival <= floor).count();
        for (s, f) in self.slots.drain(..n).zip(finishes) {
            self.late += f - s.answered;
            self.free_at = f;
        }
    }
}

/// The chunks' shape: none empty or over `CHUNK`, `fresh` normalized and in range, and the
/// same requests in the same order as the model.
fn check_shape(w: &Window, m: &Model) -> Result<(), TestCaseError> {
    for (c, h) in w.heads.iter().enumerate() {
        prop_assert!(h.len >= 1 && h.len as usize <= CHUNK, "chunk of {}", h.len);
        prop_assert_eq!(h.first, w.chunk(c)[0].arrival);
    }
    prop_assert_eq!(w.front, m.slots.first().map_or(u64::MAX, |s| s.arrival));
    prop_assert_eq!(w.last, m.slots.last().map_or(0, |s| s.arrival));
    prop_assert_eq!(w.fresh, w.norm(w.fresh));
    prop_assert!(w.fresh <= w.end());
    let ours: Vec<(u64, u64)> = (0..w.heads.len())
        .flat_map(|c| w.chunk(c))
        .map(|s| (s.arrival, s.cost.to_bits()))
        .collect();
    let theirs: Vec<(u64, u64)> = m
        .slots
        .iter()
        .map(|s| (s.arrival, s.cost.to_bits()))
        .collect();
    prop_assert_eq!(ours, theirs);
    Ok(())
}

/// A request `ahead` cycles past the floor at one of a few costs, or the floor moved on.
#[derive(Debug, Clone)]
enum Op {
    Admit { ahead: u64, cost: f64 },
    Retire { advance: u64 },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    // Arrivals spread up to 3, 40 or 400 cycles ahead: ties, short and long windows.
    prop_oneof![Just(3u64), Just(40), Just(400)].prop_flat_map(|spread| {
        let admit = (
            0..spread,
            prop_oneof![Just(0.1917), Just(1.0), Just(5.152_213), Just(3.0)],
        )
            .prop_map(|(ahead, cost)| Op::Admit { ahead, cost });
        let retire = (0..30u64).prop_map(|advance| Op::Retire { advance });
        prop::collection::vec(prop_oneof![6 => admit, 1 => retire], 1..700)
    })
}

proptest! {
    // Fixed seed: the same cases on every run.
    #![proptest_config(ProptestConfig {
        cases: 128,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6d63_6d76_6d00_0039),
        ..ProptestConfig::default()
    })]

    /// Starts, out-of-order flags, retired finishes and uncharged waiting are the full
    /// scan's bit for bit, and the window holds the model's requests in its order.
    #[test]
    fn the_chunked_window_answers_as_a_vec_rescanned_on_every_read(ops in ops()) {
        let (mut w, mut m) = (Window::default(), Model::default());
        let (mut free_at, mut late, mut floor) = (0.0f64, 0.0f64, 0u64);
        for op in &ops {
            match *op {
                Op::Admit { ahead, cost } => {
                    let a = w.admit(floor + ahead, cost, free_at);
                    let (start, out_of_order) = m.admit(floor + ahead, cost);
                    prop_assert_eq!(a.start.to_bits(), start.to_bits());
                    prop_assert_eq!(a.out_of_order, out_of_order);
                }
                Op::Retire { advance } => {
                    floor += advance;
                    w.retire(floor, &mut free_at, &mut late);
                    m.retire(floor);
                    prop_assert_eq!(free_at.to_bits(), m.free_at.to_bits());
                    prop_assert_eq!(late.to_bits(), m.late.to_bits());
                }
            }
            check_shape(&w, &m)?;
            let pending: f64 = m.finishes().iter().zip(&m.slots).fold(m.late, |l, (f, s)| l + (f - s.answered));
            prop_assert_eq!(w.overbooked(free_at, late).to_bits(), pending.to_bits());
        }
    }
}

/// Requests arriving in order fill chunks to the brim; one landing in a full chunk splits
/// it in halves, and a retirement ending inside a chunk keeps the rest of it.
#[test]
fn chunks_fill_split_in_halves_and_retire_part_way() {
    let mut w = Window::default();
    for t in 0..2 * CHUNK as u64 {
        w.admit(10 * t, 1.0, 0.0);
    }
    let lens = |w: &Window| w.heads.iter().map(|h| h.len as usize).collect::<Vec<_>>();
    assert_eq!(lens(&w), [CHUNK, CHUNK]);
    let a = w.admit(10 * 5 + 1, 1.0, 0.0);
    assert!(a.out_of_order);
    assert_eq!(lens(&w), [CHUNK / 2 + 1, CHUNK / 2, CHUNK]);
    let (mut free_at, mut late) = (0.0, 0.0);
    w.retire(10 * 3, &mut free_at, &mut late);
    assert_eq!(lens(&w), [CHUNK / 2 + 1 - 4, CHUNK / 2, CHUNK]);
    assert_eq!(free_at, 31.0, "the request at 30 finished at 31");
    w.retire(10 * CHUNK as u64, &mut free_at, &mut late);
    assert_eq!(
        lens(&w),
        [CHUNK - 1],
        "the second chunk's first request retired"
    );
    assert_eq!(
        w.free.len(),
        2,
        "the emptied chunks' blocks are kept for reuse"
    );
}
