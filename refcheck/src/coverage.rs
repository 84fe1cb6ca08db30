//! Functional coverage: named bins per block, counted by the monitors.
//!
//! A monitor already keeps the block's state to predict its outputs, so it can also say what
//! kind of cycle it just saw (a walk that evicted, a merge whose mask has holes, an access
//! that wrapped the interval counter of a ceased object, ...). A lockstep run that passes
//! says nothing about the behaviours its stimulus never reached; the bins make that visible.
//! Bins are counted from the monitor's own state, never from the engine's outputs, so an
//! internal event is counted even when the ports do not show it (an eviction without
//! `report_evictions`).

use std::fmt;

/// Declares a block's bins once: an enum (the monitors hit bins by variant, so a typo is a
/// compile error) and the names in the same order (what reports print).
macro_rules! bins {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[doc = $doc:literal])* $var:ident = $label:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name { $($(#[doc = $doc])* $var,)* }

        impl $name {
            /// Every bin's name, in declaration order (= the variants' discriminants).
            pub const NAMES: &'static [&'static str] = &[$($label,)*];
        }

        impl From<$name> for usize {
            fn from(bin: $name) -> usize {
                bin as usize
            }
        }
    };
}
pub(crate) use bins;

/// Hit counts of a block's named bins, in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    block: &'static str,
    bins: Vec<(&'static str, u64)>,
}

impl Coverage {
    /// Every bin of `names` at zero, for block `block` (short name).
    pub fn new(block: &'static str, names: &[&'static str]) -> Self {
        Coverage {
            block,
            bins: names.iter().map(|&n| (n, 0)).collect(),
        }
    }

    /// Count one hit of bin number `bin` (a block's bin enum converts into it).
    pub(crate) fn hit(&mut self, bin: impl Into<usize>) {
        self.bins[bin.into()].1 += 1;
    }

    /// Count a hit of `bin` when `cond` holds (most bins are a condition on the cycle).
    pub(crate) fn hit_if(&mut self, cond: bool, bin: impl Into<usize>) {
        if cond {
            self.hit(bin);
        }
    }

    /// Block short name (`rt`, `coalescer`, `att`).
    pub fn block(&self) -> &'static str {
        self.block
    }

    /// (bin name, hit count), in declaration order.
    pub fn bins(&self) -> &[(&'static str, u64)] {
        &self.bins
    }

    /// Hit count of the bin called `name`, if the block has one.
    pub fn count(&self, name: &str) -> Option<u64> {
        self.bins.iter().find(|(n, _)| *n == name).map(|&(_, c)| c)
    }

    /// Names of the bins never hit, in declaration order.
    pub fn missed(&self) -> Vec<&'static str> {
        self.bins
            .iter()
            .filter(|(_, c)| *c == 0)
            .map(|&(n, _)| n)
            .collect()
    }

    /// Number of bins hit at least once.
    pub fn hit_bins(&self) -> usize {
        self.bins.iter().filter(|(_, c)| *c > 0).count()
    }

    /// Add the counts of `other` (another run of the same block) to these.
    ///
    /// # Panics
    /// When `other` has other bins: adding the counts of another block is a caller bug.
    pub fn merge(&mut self, other: &Coverage) {
        assert!(
            self.block == other.block
                && self.bins.len() == other.bins.len()
                && self.bins.iter().zip(&other.bins).all(|(a, b)| a.0 == b.0),
            "merging coverage of {} into {}",
            other.block,
            self.block
        );
        for (mine, theirs) in self.bins.iter_mut().zip(&other.bins) {
            mine.1 += theirs.1;
        }
    }

    /// `coverage: N of M bins hit`: the summary line the CLI prints and tests parse.
    pub fn summary(&self) -> String {
        format!(
            "coverage: {} of {} bins hit",
            self.hit_bins(),
            self.bins.len()
        )
    }
}

/// One line per bin (`  name  count`), the missed bins if any, and the summary line last
/// (so it is the line a reader or a script finds at the end).
impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self.bins.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, count) in &self.bins {
            writeln!(f, "  {name:<width$}  {count}")?;
        }
        let missed = self.missed();
        if !missed.is_empty() {
            writeln!(f, "missed bins: {}", missed.join(", "))?;
        }
        write!(f, "{}", self.summary())
    }
}

/// A monitor's coverage so far (since it was built; resets of the block do not clear it).
pub trait Covered {
    /// The bins and their hit counts.
    fn coverage(&self) -> &Coverage;
}

#[cfg(test)]
mod tests {
    use super::*;

    bins! {
        enum Demo {
            A = "a",
            B = "b",
        }
    }

    #[test]
    fn counts_merge_and_print() {
        let mut c = Coverage::new("demo", Demo::NAMES);
        c.hit(Demo::B);
        c.hit_if(false, Demo::A);
        assert_eq!((c.count("a"), c.count("b")), (Some(0), Some(1)));
        assert_eq!(c.missed(), vec!["a"]);
        let mut d = c.clone();
        d.merge(&c);
        assert_eq!(d.count("b"), Some(2));
        // What the CLI prints a table from: the block and every bin in declaration order.
        assert_eq!(d.block(), "demo");
        assert_eq!(d.bins(), &[("a", 0), ("b", 2)]);
        let mut e = d.clone();
        e.hit(Demo::A);
        assert_eq!((d.hit_bins(), e.hit_bins()), (1, 2));
        assert_eq!(
            d.to_string(),
            "  a  0\n  b  2\nmissed bins: a\ncoverage: 1 of 2 bins hit"
        );
    }
}
