//! amdgpu-style 4-level GPU page table. (being written)
