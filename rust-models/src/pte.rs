//! 64-bit PTE layout. (being written)
