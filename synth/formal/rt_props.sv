// Bounded model check of the Remote Tracker's port properties (rtl/src/remote_tracker.md),
// written from the README alone: it sees only the ports of module `remote_tracker`.
// STATUS: see the PROVEN block at the end of this file (what, configuration, depth, time,
// tools); `synth/src/formal.rs` runs it, `synth/tests/formal_rt.rs` and `make formal`.
//
// Every input is free in every cycle except: `reset` is 1 in cycle 0, and every walk's ID
// is one of 1..ENTRIES, so the table never has to replace a row: every ID "stays
// resident". Drain IDs and the observed ID `k` are unconstrained 8-bit values (a drain of
// an ID that was never walked must miss). `k` is a free constant of the run (an input
// sampled in cycle 0 and held: an `anyconst` the AIGER path can carry). The DUT's
// flip-flops start from a free value (the flow deletes their `initial` values), so "reset
// clears" is checked from any power-up state, not from rust-hdl's simulation zeros.
// (A free window `base..base+ENTRIES-1` of walk IDs was tried first: it makes the solver
// re-derive "the rows hold distinct IDs" on every path, a pigeonhole argument, and BMC
// stalls at depth 7 even for 2 entries; with literal IDs depth 16 completes.)
//
// Properties, all asserted in every cycle:
//  (a) no loss, no double count: a drain of `k` issued in cycle d (no reset in d or d+1)
//      answers in d+1 with drain_hit = "a walk of k was issued since the previous drain of
//      k (or reset)" and drain_access / drain_remote = exactly the walks / remote walks of
//      k issued in cycles < d since then, saturating at 2^CBITS - 1. A walk issued in d
//      itself belongs to the next drain. Shadow counters `acc` / `rem` model that rule.
//  (b) drain_done in cycle t  <=>  a drain was issued in t-1 and neither t-1 nor t is a
//      reset cycle ("exactly one cycle after the request"; reset cancels it).
//  (c) every output is zero unless its drain_done / evict_valid is 1; no row is ever
//      replaced (evict_valid = 0) while the IDs fit the table.
//  (d) reset: every output is 0 in a reset cycle (whatever the state and inputs), and the
//      table is empty after it: the shadow counters restart at 0, so a drain right after
//      reset must miss with zero counters (covered by (a)).
module rt_formal #(parameter ENTRIES = 4, parameter CBITS = 4) (
    input wire clock,
    input wire reset,
    input wire walk_valid,
    input wire [7:0] walk_alloc_id,
    input wire walk_remote,
    input wire drain_valid,
    input wire [7:0] drain_alloc_id,
    // Sampled in cycle 0 only: `k` is a free constant of the run.
    input wire [7:0] k_in
);
    wire drain_done, drain_hit, evict_valid;
    wire [31:0] drain_access, drain_remote, evict_access, evict_remote;
    wire [7:0] evict_alloc_id;
    remote_tracker dut (
        .reset(reset), .walk_valid(walk_valid), .walk_alloc_id(walk_alloc_id),
        .walk_remote(walk_remote), .drain_valid(drain_valid),
        .drain_alloc_id(drain_alloc_id), .drain_done(drain_done), .drain_hit(drain_hit),
        .drain_access(drain_access), .drain_remote(drain_remote),
        .evict_valid(evict_valid), .evict_alloc_id(evict_alloc_id),
        .evict_access(evict_access), .evict_remote(evict_remote), .clock(clock));

    reg init = 1'b1;
    // Free constants: chosen in cycle 0, held after (a register without an initial value
    // that only holds itself would be optimised to an undefined value that may change).
    reg [7:0] k_q = 0;
    wire [7:0] k = init ? k_in : k_q;
    always @(posedge clock) k_q <= k;

    localparam [31:0] MAX = (CBITS >= 32) ? 32'hffffffff : ((32'd1 << CBITS) - 32'd1);
    localparam [7:0] WINDOW = ENTRIES;

    reg [31:0] acc = 0, rem = 0, cap_acc = 0, cap_rem = 0;
    reg pend = 1'b0, pend_any = 1'b0, cap_hit = 1'b0;

    always @* begin
        if (init) assume(reset);
        if (walk_valid) assume(walk_alloc_id >= 8'd1 && walk_alloc_id <= WINDOW);
    end

    wire walk_k = walk_valid && walk_alloc_id == k;
    wire drain_k = drain_valid && drain_alloc_id == k;
    function [31:0] sat_inc(input [31:0] x);
        sat_inc = (x == MAX) ? x : x + 32'd1;
    endfunction

    always @(posedge clock) begin
        init <= 1'b0;
        if (reset) begin
            acc <= 0; rem <= 0; pend <= 1'b0; pend_any <= 1'b0;
        end else begin
            pend <= drain_k;
            pend_any <= drain_valid;
            if (drain_k) begin
                cap_acc <= acc; cap_rem <= rem; cap_hit <= acc != 0;
                acc <= walk_k ? 32'd1 : 32'd0;
                rem <= (walk_k && walk_remote) ? 32'd1 : 32'd0;
            end else if (walk_k) begin
                acc <= sat_inc(acc);
                if (walk_remote) rem <= sat_inc(rem);
            end
        end
    end

    wire drain_zero = !drain_hit && drain_access == 0 && drain_remote == 0;
    wire evict_zero = evict_alloc_id == 0 && evict_access == 0 && evict_remote == 0;
    always @* begin
        // (d) every output is zero in a reset cycle, from any state.
        if (reset) assert(!drain_done && drain_zero && !evict_valid && evict_zero);
        if (!init) begin
            // (a) the drain of k returns exactly its walks since the previous drain.
            if (pend && !reset) begin
                assert(drain_hit == cap_hit);
                assert(drain_access == cap_acc);
                assert(drain_remote == cap_rem);
            end
            // (b) a response exactly one cycle after each request, none otherwise.
            assert(drain_done == (pend_any && !reset));
        end
        // (c) outputs are zero unless valid; nothing is evicted while the IDs fit.
        if (!drain_done) assert(drain_zero);
        if (!evict_valid) assert(evict_zero);
        assert(!evict_valid);
    end
endmodule

// PROVEN (yosys 0.23 (Debian 0.23-6) `write_aiger` + its bundled ABC 1.01 (`yosys-abc`):
// `fold; strash; [scorr;] dc2; bmc3 -F depth` (or `pdr`), run by synth/src/formal.rs on the
// Verilog emitted from the current rtl/src/remote_tracker.rs; wall times measured on the
// shared 2-core machine under heavy load (load average 10-12), 2026-12-02, yosys included):
//   make test   (synth/tests/formal_rt.rs): 2 entries, 2-bit counters, free power-up
//               state, 12 cycles: PASS in 7-22 s. Two mutants of the emitted Verilog fail:
//               walk lane drops `walk_remote` -> cycle 3 (reset, remote walk of k, drain
//               of k: drain_remote 0, expected 1); reset leaves row 1's valid bit alone
//               -> cycle 2 (a drain right after reset hits a power-up row). 1-8 s each.
//   make formal: 2 entries / 2 bits / 16 cycles: PASS, 44-51 s;
//               4 entries / 4 bits / 9 cycles: PASS, 9-12 s;
//               32 entries / 32 bits (the default, configs/hw.toml) / 8 cycles: PASS,
//               40-66 s (about 60 % of it yosys);
//               2 entries / 2 bits, free power-up, `pdr`: PROVED for every depth, 7.4 s.
// "N cycles" = cycles 0..N-1, cycle 0 the reset cycle. The 2-bit runs reach counter
// saturation (3 walks); the 4-bit run at 9 cycles does not (at most 7 walks before a
// drain), nor can the 4-entry run's IDs overflow it; with 32-bit counters saturation is out of reach of any bounded run, and a 32-entry table
// cannot fill within 8 cycles, so the default-config run checks the pipeline, forwarding,
// drain/walk ordering and reset, not capacity. Beyond those depths the BMC's conflicts grow
// ~5x per cycle (4 entries, free power-up: 10 cycles did not finish in 90 s); pdr on 4
// entries did not finish in 100 s.
//
// Why not yosys-smtbmc: z3 4.8.12 does not finish *reading* yosys 0.23's write_smt2 output
// of this harness (its define-fun expansion of the transition relation runs for minutes on
// a 2-entry RT; no check-sat is reached; -stbv / -stdt, `opt` first: the same), and
// Debian's boolector 1.5.118 is the old SMT-LIB1-era release (no `set-option`, no
// incremental SMT2), so smtbmc cannot drive it.
