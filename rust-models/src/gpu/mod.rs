//! MCM GPU timing model. (being written)
