//! Port-level protocol shared by the behavioural twins, the RTL wrappers, the co-simulation
//! bridge and the GPU model.
//!
//! Every hardware block is seen from outside as two flat port sets, `In` and `Out`, each a
//! list of named unsigned signals no wider than 64 bits. The names are the Verilog port
//! names of the emitted module (plus the clock, `clock`, which is implicit), so the
//! Verilator shim, the VCD writer and the scoreboard can all be generic over a block.
//!
//! # Cycle convention (identical in every engine)
//! For cycle `k`:
//! 1. the inputs `In[k]` are applied while the clock is low;
//! 2. combinational logic settles and the outputs `Out[k]` are sampled — they may depend on
//!    the state *and* on `In[k]`;
//! 3. the rising clock edge updates the state from the state and `In[k]`.
//!
//! [`CycleModel::step`] performs exactly these three steps and returns `Out[k]`.

/// One named port of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortDesc {
    /// Verilog / VCD name of the port.
    pub name: &'static str,
    /// Width in bits, 1..=64.
    pub width: u32,
}

/// A flat set of ports whose values are carried as `u64`s.
///
/// # Safety
/// The implementor is `#[repr(C)]` with exactly `PORTS.len()` fields, each a `u64`, in
/// the order of `PORTS` (so any `PORTS.len()` words are a valid value, and a value's bytes
/// are its words). The [`ports!`] macro, the only implementor, writes such structs; the
/// co-simulation's hand-over copies them word by word with non-temporal stores.
pub unsafe trait Ports:
    Copy + Default + PartialEq + core::fmt::Debug + Send + 'static
{
    /// The ports, in declaration order.
    const PORTS: &'static [PortDesc];
    /// Value of port `i` (index into [`Ports::PORTS`]).
    fn get(&self, i: usize) -> u64;
    /// Set port `i`; the value is masked to the port's width.
    fn set(&mut self, i: usize, v: u64);

    /// Every port's value into `out[..PORTS.len()]`, in declaration order (one pass; an
    /// RTL engine copies its ports this way every cycle).
    fn write_words(&self, out: &mut [u64]) {
        for (i, w) in out.iter_mut().take(Self::PORTS.len()).enumerate() {
            *w = self.get(i);
        }
    }

    /// The port set whose ports hold `words[..PORTS.len()]`, each masked to its width.
    fn read_words(words: &[u64]) -> Self {
        let mut p = Self::default();
        for (i, &w) in words.iter().take(Self::PORTS.len()).enumerate() {
            p.set(i, w);
        }
        p
    }
}

/// Anything that can be clocked one cycle at a time through a block's ports: the
/// behavioural twin, the rust-hdl simulation, the Verilator model.
pub trait CycleModel {
    type In: Ports;
    type Out: Ports;
    /// One clock cycle, following the cycle convention of this module.
    fn step(&mut self, input: &Self::In) -> Self::Out;

    /// After a `step`: the first of the engine's checks on its own internal state that the
    /// step violated, by name (an RTL engine built with its invariants; `None` for engines
    /// without such checks).
    fn state_violation(&self) -> Option<String> {
        None
    }

    /// `inputs` stepped in order, each cycle's outputs appended to `outputs`; the first
    /// cycle (index into `inputs`) after which [`CycleModel::state_violation`] named a
    /// broken check, with its name. Same cycles as `step` one at a time (the default); an
    /// engine behind a foreign-function boundary (the Verilator models) crosses it once
    /// per batch.
    fn step_batch(
        &mut self,
        inputs: &[Self::In],
        outputs: &mut Vec<Self::Out>,
    ) -> Option<(usize, String)> {
        let mut broken = None;
        for (k, input) in inputs.iter().enumerate() {
            outputs.push(self.step(input));
            if broken.is_none() {
                broken = self.state_violation().map(|v| (k, v));
            }
        }
        broken
    }
}

/// A boxed model (a trait object) is a model.
impl<M: CycleModel + ?Sized> CycleModel for Box<M> {
    type In = M::In;
    type Out = M::Out;
    #[inline]
    fn step(&mut self, input: &Self::In) -> Self::Out {
        (**self).step(input)
    }
    #[inline]
    fn state_violation(&self) -> Option<String> {
        (**self).state_violation()
    }
    #[inline]
    fn step_batch(
        &mut self,
        inputs: &[Self::In],
        outputs: &mut Vec<Self::Out>,
    ) -> Option<(usize, String)> {
        (**self).step_batch(inputs, outputs)
    }
}

/// Mask of the low `width` bits.
#[inline]
pub const fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Declares a port-set struct: every field is a `u64` holding a `width`-bit value.
#[macro_export]
macro_rules! ports {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* $field:ident : $w:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        #[repr(C)]
        pub struct $name { $($(#[$fm])* pub $field: u64),* }
        // SAFETY: `#[repr(C)]`, one `u64` field per port, in the order of `PORTS`.
        unsafe impl $crate::protocol::Ports for $name {
            const PORTS: &'static [$crate::protocol::PortDesc] = &[
                $($crate::protocol::PortDesc { name: stringify!($field), width: $w }),*
            ];
            #[allow(unused_assignments)]
            fn get(&self, i: usize) -> u64 {
                let mut k = 0usize;
                $( if i == k { return self.$field; } k += 1; )*
                panic!("port index {} out of range for {}", i, stringify!($name))
            }
            #[allow(unused_assignments)]
            fn set(&mut self, i: usize, v: u64) {
                let mut k = 0usize;
                $( if i == k { self.$field = v & $crate::protocol::mask($w); return; } k += 1; )*
                panic!("port index {} out of range for {}", i, stringify!($name))
            }
            #[inline]
            #[allow(unused_assignments)]
            fn write_words(&self, out: &mut [u64]) {
                let mut k = 0usize;
                $( out[k] = self.$field; k += 1; )*
            }
            #[inline]
            #[allow(unused_assignments)]
            fn read_words(words: &[u64]) -> Self {
                let mut k = 0usize;
                $name { $( $field: { let v = words[k] & $crate::protocol::mask($w); k += 1; v } ),* }
            }
        }
    };
}

/// The three hardware blocks of the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockKind {
    RemoteTracker,
    TlbCoalescer,
    AccessTimeTracker,
}

impl BlockKind {
    pub const ALL: [BlockKind; 3] = [
        BlockKind::RemoteTracker,
        BlockKind::TlbCoalescer,
        BlockKind::AccessTimeTracker,
    ];
    /// Name of the emitted Verilog top module (and file stem).
    pub fn module_name(self) -> &'static str {
        match self {
            BlockKind::RemoteTracker => "remote_tracker",
            BlockKind::TlbCoalescer => "tlb_coalescer",
            BlockKind::AccessTimeTracker => "access_time_tracker",
        }
    }
    /// Short name used on the command line.
    pub fn short_name(self) -> &'static str {
        match self {
            BlockKind::RemoteTracker => "rt",
            BlockKind::TlbCoalescer => "coalescer",
            BlockKind::AccessTimeTracker => "att",
        }
    }
    pub fn from_short_name(s: &str) -> Option<BlockKind> {
        BlockKind::ALL.into_iter().find(|b| b.short_name() == s)
    }
}

// ---------------------------------------------------------------------------------------
// Remote Tracker (CLAP §4.3). Widths are the paper's: 8-bit allocation ID, 32-bit counters.
// ---------------------------------------------------------------------------------------
ports! {
    /// Inputs of the Remote Tracker.
    pub struct RtIn {
        /// Synchronous reset: clears the table; blocks every other update this cycle.
        reset: 1,
        /// A page walk completed this cycle.
        walk_valid: 1,
        /// Allocation ID read from the PTE's ignored bits.
        walk_alloc_id: 8,
        /// The PTE's chiplet differs from the requesting chiplet.
        walk_remote: 1,
        /// The driver asks for (and clears) the counters of `drain_alloc_id`.
        drain_valid: 1,
        drain_alloc_id: 8,
    }
}
ports! {
    /// Outputs of the Remote Tracker.
    pub struct RtOut {
        /// A drain response is on `drain_*` this cycle.
        drain_done: 1,
        /// The drained ID was in the table (else counters read 0).
        drain_hit: 1,
        drain_access: 32,
        drain_remote: 32,
        /// An entry was replaced; its ID and counters are reported (optional driver report).
        evict_valid: 1,
        evict_alloc_id: 8,
        evict_access: 32,
        evict_remote: 32,
    }
}

/// Stimulus helpers: one cycle's inputs.
impl RtIn {
    /// No request.
    pub fn idle() -> RtIn {
        RtIn::default()
    }
    /// Synchronous reset.
    pub fn reset() -> RtIn {
        RtIn {
            reset: 1,
            ..RtIn::default()
        }
    }
    /// A completed page walk for `alloc_id`, remote or local.
    pub fn walk(alloc_id: u8, remote: bool) -> RtIn {
        RtIn {
            walk_valid: 1,
            walk_alloc_id: alloc_id as u64,
            walk_remote: remote as u64,
            ..RtIn::default()
        }
    }
    /// A drain request for `alloc_id`.
    pub fn drain(alloc_id: u8) -> RtIn {
        RtIn::idle().with_drain(alloc_id)
    }
    /// The same cycle with a drain request for `alloc_id` added.
    pub fn with_drain(mut self, alloc_id: u8) -> RtIn {
        self.drain_valid = 1;
        self.drain_alloc_id = alloc_id as u64;
        self
    }
}

// ---------------------------------------------------------------------------------------
// TLB coalescing logic (CLAP §4.6): merge unit + lookup unit. VPN/PPN are 64 KB page numbers.
// ---------------------------------------------------------------------------------------
ports! {
    /// Inputs of the TLB coalescing logic.
    pub struct CoalIn {
        reset: 1,
        /// A 128-byte line of sixteen PTEs arrived from the walker.
        merge_valid: 1,
        /// The requested VPN; its low 4 bits index the requested PTE in the line.
        merge_vpn: 32,
        pte0: 64, pte1: 64, pte2: 64, pte3: 64, pte4: 64, pte5: 64, pte6: 64, pte7: 64,
        pte8: 64, pte9: 64, pte10: 64, pte11: 64, pte12: 64, pte13: 64, pte14: 64, pte15: 64,
        /// Probe a coalesced entry with a VPN.
        lookup_valid: 1,
        lookup_vpn: 32,
        entry_base_vpn: 32,
        entry_base_ppn: 32,
        entry_mask: 16,
    }
}
ports! {
    /// Outputs of the TLB coalescing logic.
    pub struct CoalOut {
        merge_done: 1,
        merge_base_vpn: 32,
        merge_base_ppn: 32,
        merge_mask: 16,
        lookup_done: 1,
        lookup_hit: 1,
        lookup_ppn: 32,
    }
}

impl CoalIn {
    /// The sixteen PTEs of the line, slot 0 first.
    pub fn ptes(&self) -> [u64; 16] {
        [
            self.pte0, self.pte1, self.pte2, self.pte3, self.pte4, self.pte5, self.pte6, self.pte7,
            self.pte8, self.pte9, self.pte10, self.pte11, self.pte12, self.pte13, self.pte14,
            self.pte15,
        ]
    }
    /// Load the sixteen PTE ports from a line.
    pub fn set_ptes(&mut self, line: &[u64; 16]) {
        for (i, &p) in line.iter().enumerate() {
            // pte0 is port index 3 (after reset, merge_valid, merge_vpn).
            <Self as Ports>::set(self, 3 + i, p);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Access Time Tracker (Forest). VPNs are 4 KB page numbers; object index 5 bits (32 objects).
// ---------------------------------------------------------------------------------------
ports! {
    /// Inputs of the Access Time Tracker.
    pub struct AttIn {
        reset: 1,
        /// A GPU memory access to `acc_vpn`.
        acc_valid: 1,
        acc_vpn: 32,
        /// Driver: register object `reg_obj` for VPNs `reg_start_vpn ..= reg_end_vpn`.
        reg_valid: 1,
        reg_obj: 5,
        reg_start_vpn: 32,
        reg_end_vpn: 32,
        /// Driver: remove object `rm_obj`.
        rm_valid: 1,
        rm_obj: 5,
        /// Driver: set the cease bit of `cease_obj` (no more profiling interrupts).
        cease_valid: 1,
        cease_obj: 5,
    }
}
ports! {
    /// Outputs of the Access Time Tracker.
    pub struct AttOut {
        /// (page, timer) record for the page access-counter store.
        rec_valid: 1,
        rec_obj: 5,
        rec_vpn: 32,
        rec_timer: 32,
        /// Profiling interrupt naming an object.
        irq_valid: 1,
        irq_obj: 5,
        /// Least recently accessed registered object.
        oldest_valid: 1,
        oldest_obj: 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_indices_round_trip_and_mask_to_width() {
        let mut p = RtIn::default();
        for (i, d) in RtIn::PORTS.iter().enumerate() {
            p.set(i, u64::MAX);
            assert_eq!(p.get(i), mask(d.width), "port {}", d.name);
        }
        let mut c = CoalIn::default();
        let line: [u64; 16] = core::array::from_fn(|i| i as u64 * 3 + 1);
        c.set_ptes(&line);
        assert_eq!(c.ptes(), line);
        assert_eq!(CoalIn::PORTS[3].name, "pte0");
    }

    /// The bulk copies agree with port-by-port get/set on every block's ports: every port
    /// gets a distinct value with bits above its width set, so a swapped, skipped or
    /// unmasked port shows.
    fn bulk_copies_match_get_and_set<P: Ports>() {
        let n = P::PORTS.len();
        let words: Vec<u64> = (0..n as u64)
            .map(|i| !0u64 << 40 | (i * 0x9e37 + 5))
            .collect();
        let mut by_port = P::default();
        for (i, &w) in words.iter().enumerate() {
            by_port.set(i, w);
        }
        assert_eq!(P::read_words(&words), by_port);
        let mut out = vec![0; n + 1];
        by_port.write_words(&mut out);
        for (i, (&w, d)) in out.iter().zip(P::PORTS).enumerate() {
            assert_eq!(w, by_port.get(i), "port {}", d.name);
        }
        assert_eq!(out[n], 0, "nothing written past the ports");
    }

    #[test]
    fn bulk_port_copies_match_get_and_set_on_every_block() {
        bulk_copies_match_get_and_set::<RtIn>();
        bulk_copies_match_get_and_set::<RtOut>();
        bulk_copies_match_get_and_set::<CoalIn>();
        bulk_copies_match_get_and_set::<CoalOut>();
        bulk_copies_match_get_and_set::<AttIn>();
        bulk_copies_match_get_and_set::<AttOut>();
    }
}
