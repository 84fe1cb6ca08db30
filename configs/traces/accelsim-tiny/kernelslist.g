# A hand-written Accel-Sim trace (docs/trace-formats-external.md): two kernels over two
# copied-in buffers (A at 0x7f0000000000, B at 0x7f0000200000) and two buffers the list does
# not declare (an output at 0x7f0000400000 and a counter 4 MB above it), whose allocations
# mcmvm derives from the addresses. Accel-Sim itself skips these comment lines.
MemcpyHtoD,0x00007f0000000000,4096
MemcpyHtoD,0x00007f0000200000,2048
kernel-1.traceg
# A is copied again before the second launch: the same buffer, one allocation.
MemcpyHtoD,0x00007f0000000000,4096
kernel-2.traceg.xz
