//! The scoreboard: every output of every engine, every cycle. The first engine is the
//! reference only for naming; a mismatch lists every engine's value of the first port (in
//! protocol order) on which they do not all agree.

use mcmvm_models::protocol::Ports;

/// The first divergence between engines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Cycle number, counted from 0 (the cycle whose outputs differ).
    pub cycle: u64,
    /// Output port name.
    pub signal: &'static str,
    /// Each engine's value of that port, in engine order.
    pub values: Vec<(String, u64)>,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cycle {}: signal {}:", self.cycle, self.signal)?;
        for (engine, v) in &self.values {
            write!(f, " {engine}={v:#x}")?;
        }
        Ok(())
    }
}

/// Compares the outputs of named engines cycle by cycle.
pub struct Scoreboard {
    engines: Vec<String>,
    cycles_checked: u64,
}

impl Scoreboard {
    /// A scoreboard for engines named `engines` (the order of every later `check`).
    pub fn new(engines: Vec<String>) -> Self {
        Scoreboard {
            engines,
            cycles_checked: 0,
        }
    }

    /// Cycles compared so far.
    pub fn cycles_checked(&self) -> u64 {
        self.cycles_checked
    }

    /// Compare one cycle's outputs (one per engine, in engine order).
    pub fn check<O: Ports>(&mut self, cycle: u64, outputs: &[O]) -> Option<Mismatch> {
        self.cycles_checked += 1;
        let (first, rest) = outputs.split_first()?;
        // Whole-struct comparison first: the common case costs one compare per engine.
        if rest.iter().all(|o| o == first) {
            return None;
        }
        let port = (0..O::PORTS.len()).find(|&i| rest.iter().any(|o| o.get(i) != first.get(i)))?;
        Some(Mismatch {
            cycle,
            signal: O::PORTS[port].name,
            values: self
                .engines
                .iter()
                .zip(outputs)
                .map(|(name, o)| (name.clone(), o.get(port)))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcmvm_models::protocol::RtOut;

    #[test]
    fn agreeing_engines_pass_and_the_first_differing_port_is_named() {
        let mut sb = Scoreboard::new(vec!["a".into(), "b".into(), "c".into()]);
        let same = RtOut {
            drain_access: 5,
            ..RtOut::default()
        };
        assert_eq!(sb.check(0, &[same, same, same]), None);
        let mut off = same;
        off.evict_remote = 9;
        off.drain_remote = 1;
        let m = sb.check(1, &[same, same, off]).expect("differs");
        // drain_remote comes before evict_remote in the protocol.
        assert_eq!(m.signal, "drain_remote");
        assert_eq!(m.cycle, 1);
        assert_eq!(
            m.values,
            vec![
                ("a".to_string(), 0),
                ("b".to_string(), 0),
                ("c".to_string(), 1)
            ]
        );
        assert_eq!(sb.cycles_checked(), 2);
    }
}
