//! UVM path: far faults, TBNp, Forest, SpecForest. (being written)
