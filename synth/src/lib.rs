//! yosys synthesis and lint. (being written)
