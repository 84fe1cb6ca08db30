//! The Remote Trackers of every chiplet as the driver's one drain port.

use crate::driver::RtDrain;

/// The Remote Trackers of every chiplet, seen by the driver as one drain port. Whatever
/// the driver drains is also recorded per allocation for the report.
pub(super) struct RtBank<'a> {
    pub gmmus: &'a mut [super::gmmu::Gmmu],
    pub per_alloc: &'a mut [super::metrics::AllocCounters],
    /// The system cycle of the driver's drains.
    pub now: u64,
    /// The first block fault; the run stops with it when the driver returns.
    pub fault: &'a mut Option<mcmvm_protocol::system::BlockFault>,
}

impl RtDrain for RtBank<'_> {
    fn drain(&mut self, alloc_id: u8) -> (u64, u64) {
        let (mut access, mut remote) = (0u64, 0u64);
        if self.fault.is_some() {
            return (0, 0);
        }
        for g in self.gmmus.iter_mut() {
            match g.drain_rt(self.now, alloc_id) {
                Ok((a, r)) => {
                    access += a;
                    remote += r;
                }
                Err(f) => {
                    *self.fault = Some(f);
                    return (0, 0);
                }
            }
        }
        // Allocation IDs are allocation index + 1 (0 = none).
        if let Some(c) = (alloc_id as usize)
            .checked_sub(1)
            .and_then(|i| self.per_alloc.get_mut(i))
        {
            c.rt_access += access;
            c.rt_remote += remote;
        }
        (access, remote)
    }
}
