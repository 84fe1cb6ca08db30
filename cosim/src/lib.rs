//! Lockstep co-simulation. (being written)
