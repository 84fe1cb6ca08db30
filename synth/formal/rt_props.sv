// STATUS: not yet run to completion. With yosys 0.23 (`prep; flatten; async2sync;
// dffunmap; write_smt2`) and yosys-smtbmc, z3 4.8.12 did not finish step 0 in 2 minutes even
// for a 2-entry, 2-bit RT (a trivial counter design passes in 0.07 s), and Debian's
// boolector 1.5 rejects the generated SMT2; the cause is not found yet. No test runs this.
//
// Bounded model check of the Remote Tracker's port properties (rtl/src/remote_tracker.md),
// written from the README alone. The inputs are free every cycle; `k` is one symbolic
// allocation ID (any value, fixed for the run). Shadow counters follow the README's
// ordering rule: a drain issued in cycle d returns exactly the walks of its ID issued in
// cycles < d since the previous drain of that ID; a walk of cycle d lands in the freshly
// cleared row. Counters saturate at 2^CBITS - 1. The IDs are limited to 1..ENTRIES so the
// table never overflows: the properties hold "while the ID stays resident".
module rt_formal #(parameter ENTRIES = 4, parameter CBITS = 4) (
    input wire clock,
    input wire reset,
    input wire walk_valid,
    input wire [7:0] walk_alloc_id,
    input wire walk_remote,
    input wire drain_valid,
    input wire [7:0] drain_alloc_id
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

    (* anyconst *) reg [7:0] k;
    localparam [31:0] MAX = (CBITS >= 32) ? 32'hffffffff : ((32'd1 << CBITS) - 32'd1);

    reg init = 1'b1;
    reg [31:0] acc = 0, rem = 0, cap_acc = 0, cap_rem = 0;
    reg pend = 1'b0, cap_hit = 1'b0, after_reset = 1'b0;

    always @* begin
        assume(k >= 8'd1 && k <= ENTRIES);
        if (walk_valid) assume(walk_alloc_id >= 8'd1 && walk_alloc_id <= ENTRIES);
        if (drain_valid) assume(drain_alloc_id >= 8'd1 && drain_alloc_id <= ENTRIES);
        if (init) assume(reset);
    end

    wire walk_k = walk_valid && walk_alloc_id == k;
    wire drain_k = drain_valid && drain_alloc_id == k;
    function [31:0] sat_inc(input [31:0] x);
        sat_inc = (x == MAX) ? x : x + 32'd1;
    endfunction

    always @(posedge clock) begin
        init <= 1'b0;
        after_reset <= reset;
        if (reset) begin
            acc <= 0; rem <= 0; pend <= 1'b0;
        end else begin
            pend <= drain_k;
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

    always @* begin
        if (!init) begin
            // No loss, no double count: the drain of k answers one cycle later with exactly
            // the walks since the previous drain.
            if (pend && !reset) begin
                assert(drain_done);
                assert(drain_hit == cap_hit);
                assert(drain_access == cap_acc);
                assert(drain_remote == cap_rem);
            end
            // Outputs are zero unless valid.
            if (!drain_done) assert(!drain_hit && drain_access == 0 && drain_remote == 0);
            if (!evict_valid) assert(evict_alloc_id == 0 && evict_access == 0 && evict_remote == 0);
            // No row is ever replaced while the IDs fit the table.
            assert(!evict_valid);
            // Reset clears: the cycle after a reset answers nothing.
            if (after_reset) assert(!drain_done && !evict_valid);
        end
    end
endmodule
