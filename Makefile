# mcmvm — first commands on a fresh Debian/Ubuntu machine with Rust: `make run`, `make test`.
# The Makefile installs what it needs: yosys, verilator, iverilog, opensta from Debian, and the
# osu018 Liberty file (package qflow-tech-osu018, unpacked locally, without all of qflow).

SHELL := /bin/bash
CARGO ?= cargo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
LIBERTY := tools/osu018/osu018_stdcells.lib
# The binary `make run` uses: the plain release build `make test` also produces.
MCMVM := target/release/mcmvm
# `make build-fast`: the same code built with profile-guided optimisation for this CPU.
PGO := target/pgo
MCMVM_FAST := $(PGO)/mcmvm
# What the binary is built from: a change retrains and rebuilds it.
SOURCES := Cargo.toml Cargo.lock $(shell find src protocol rust-models rtl cosim synth testbenches refcheck report configs \
	-name '*.rs' -o -name '*.toml' -o -name '*.ys' -o -name '*.cpp' -o -name '*.h' 2>/dev/null)
export MCMVM_LIBERTY := $(abspath $(LIBERTY))

.PHONY: run clap-extras paper test deps build build-fast pgo-build hw sweep-clap sweep-forest sensitivity test-exhaustive formal bench fmt clippy clean sweep-slurm test-slurm soak rtl-mutants mutants fuzz

# The Forest sweep runs on the GPU timing model: the table at scale 0.05, then the
# oversubscription curve at 0.02 (25 workloads, 625 runs: 80 s on 2 idle cores); `make
# paper` runs both larger, sharded.
run: deps build
	$(MCMVM) hw --out out
	$(MCMVM) sweep --suite clap --no-extras --out out/clap
	$(MCMVM) sweep --suite forest --out out/forest
	$(MCMVM) hil
	$(MCMVM) report --out out

# CLAP's extra runs after `make run`: 8 chiplets, the PMM threshold and MMA's block count
# (36 runs, about a minute on 2 cores). `--resume` keeps `make run`'s 126 main runs, so
# only the extra runs are made; then the report again, with their tables.
clap-extras: build
	$(MCMVM) sweep --suite clap --resume --out out/clap
	$(MCMVM) report --out out

# The full studies beyond `make run`: every workload and policy of CLAP, the Forest
# oversubscription curve (110-200 %), run as sweep plans sharded over this machine's cores
# (the same plans go to a cluster with `make sweep-slurm`; docs/cluster.md), then merged
# into the usual tables and figures under $(PAPER_OUT). PAPER_SCALE sizes the inputs: `paper`
# gives each CLAP workload the paper's input size class (docs/workloads.md; the Forest
# workloads have none), a number multiplies every workload. PAPER_FOREST_SCALE sizes the
# Forest suite on the GPU timing model, where a thrashing gather replays whole warp
# instructions (hchi: ~25-45 s a run at 0.1, ~8 min at 1 on 2 loaded cores), so its full
# curve stays within hours.
PAPER_OUT ?= out/paper
PAPER_SCALE ?= paper
PAPER_FOREST_SCALE ?= 0.25
PAPER_OVERSUB ?= 1.1,1.25,1.5,1.75,2.0
paper: build
	@mkdir -p $(PAPER_OUT)
	$(MCMVM) sweep --suite clap --scale $(PAPER_SCALE) --out $(PAPER_OUT)/clap --plan $(PAPER_OUT)/clap.plan
	$(MCMVM) sweep --suite forest --scale $(PAPER_FOREST_SCALE) --oversub $(PAPER_OVERSUB) --out $(PAPER_OUT)/forest --plan $(PAPER_OUT)/forest.plan
	cat $(PAPER_OUT)/clap.plan $(PAPER_OUT)/forest.plan | xargs -P $$(nproc) -d '\n' -I CMD sh -c 'CMD --quiet > /dev/null'
	$(MCMVM) sweep merge $(PAPER_OUT)/clap
	$(MCMVM) sweep merge $(PAPER_OUT)/forest
	$(MCMVM) report --out $(PAPER_OUT)

# Forest's thresholds one at a time on the Forest paper's GPU at scale 0.05 (650 runs; 6 min
# on 2 shared cores), not part of `make run`.
sensitivity: deps build
	$(MCMVM) sweep --suite forest-sensitivity --out out/forest-sensitivity

# Both studies beyond one machine (docs/cluster.md): each suite's plan (one command a run)
# submitted as a Slurm job array whose task i runs plan line i+1, each run writing
# $(SWEEP_OUT)/<suite>/runs/; `mcmvm sweep merge` builds the tables when squeue is empty.
# SLURM_DIR holds plans, batch scripts and logs; CLAP_ARGS / FOREST_ARGS narrow a suite.
SLURM_DIR ?= out/slurm
SWEEP_OUT ?= out
sweep-slurm: build
	@command -v sbatch >/dev/null || { echo "sweep-slurm: no sbatch here (a Slurm client is needed)"; exit 1; }
	@set -e; dir=$(abspath $(SLURM_DIR)); mkdir -p $$dir; for s in clap forest; do \
		if [ $$s = clap ]; then extra='$(CLAP_ARGS)'; else extra='$(FOREST_ARGS)'; fi; \
		$(MCMVM) sweep --suite $$s $$extra --out $(abspath $(SWEEP_OUT))/$$s --plan $$dir/$$s.plan; \
		n=$$(wc -l < $$dir/$$s.plan); \
		printf '%s\n' '#!/bin/sh' "#SBATCH --job-name=mcmvm-$$s" "#SBATCH --array=0-$$((n - 1))" \
			"#SBATCH --output=$$dir/$$s-%a.log" \
			'line=$$(sed -n "$$((SLURM_ARRAY_TASK_ID + 1))p" '"$$dir/$$s.plan"')' \
			'[ -n "$$line" ] || { echo "no plan line for task $$SLURM_ARRAY_TASK_ID" >&2; exit 2; }' \
			'exec sh -c "$$line"' > $$dir/$$s.sbatch; \
		job=$$(sbatch --parsable $$dir/$$s.sbatch); \
		echo "sweep-slurm: $$s: $$n runs as Slurm array job $${job%%;*} (logs $$dir/$$s-<task>.log)"; \
	done; \
	echo "sweep-slurm: when squeue shows them done:"; \
	echo "  $(MCMVM) sweep merge $(SWEEP_OUT)/clap && $(MCMVM) sweep merge $(SWEEP_OUT)/forest"

# Opt-in: a one-node Slurm cluster on localhost (slurm-wlm and munge from Debian when
# missing) runs a small `make sweep-slurm`; the merged files must equal the in-process
# sweep's. Daemons and temporary files are gone afterwards.
test-slurm: build
	MCMVM=$(abspath $(MCMVM)) tests/slurm/run.sh

# Every suite, each slow property at a small size (scale, cycles, a subset of the matrix);
# the written-size versions are `#[ignore = "slow: ..."]`, each naming its fast case, and run
# under `make test-exhaustive`. What runs where, with measured times: docs/performance.md.
test: deps
	$(CARGO) test --release --workspace
	@echo "make test: all suites passed"

# Slow, exhaustive runs; not part of `make test`: every `#[ignore]`d test as well (the
# written-size README examples, whole policy matrices, 1 M-cycle lockstep runs, benchmarks).
test-exhaustive: deps
	MCMVM_EXHAUSTIVE=1 $(CARGO) test --release --workspace -- --include-ignored

# Opt-in long check: `--hw check` over every CLAP workload (clap policy) and every Forest
# workload (forest, the Forest paper's GPU) at the default scale; prints the block cycles compared
# and mismatches, and fails on a mismatch or below 10^8 cycles (docs/verification.md, "Soak").
soak: build
	$(MCMVM) soak --min-cycles 100000000

# Opt-in: every parser of a user's file (mcmvm, Accel-Sim and NVBit traces, the GPU / UVM /
# hardware configs, VCD stimulus) under FUZZ_INPUTS generated and mutated inputs on every
# core; prints per target inputs, panics, hangs, peak memory, and fails on any failure,
# saving the input under target/fuzz-crashes/ (docs/verification.md, "Fuzzing").
FUZZ_INPUTS ?= 1000000
FUZZ_SEED ?= 40
fuzz:
	$(CARGO) run --release -p mcmvm-fuzz -- --inputs $(FUZZ_INPUTS) --seed $(FUZZ_SEED) --workers $$(nproc)

# Hand-written mutants of the emitted Verilog, each run under the README monitor on the
# testbench stimulus and in a short `--hw check` system run (docs/verification.md).
rtl-mutants: build
	$(MCMVM) cosim --mutants

# Bounded model check of the Remote Tracker's port properties (synth/formal/rt_props.sv,
# yosys → AIGER → yosys-abc bmc3): bigger tables and deeper runs than the 2-entry check in
# `make test`; prints each configuration's depth and time.
formal: deps
	$(CARGO) test --release -p mcmvm-synth --test suite formal_rt -- --include-ignored --nocapture --test-threads 1

# Criterion benches: a plain release build (the profile-guided binary's speed is what `run`
# prints; see the README's speed table for both). criterion is behind mcmvm-models' `bench`
# feature so that `make test` does not build it (rust-models/Cargo.toml says why).
bench: deps
	$(CARGO) bench --workspace --features mcmvm-models/bench

# Opt-in mutation testing (cargo-mutants; docs/verification.md): the twins (blocks/), the
# driver's PMM/MMA and eviction rules and the UVM eviction path, and the reference monitors
# (refcheck/), each against the fast tests that cover it. It runs in place in a copy of
# HEAD ($(MUTANTS_TREE)) with its own target directory, in release with incremental builds
# (one mutant = one crate rebuilt). MUTANTS_SHARD picks a deterministic round-robin sample
# per area (k/n: mutant i runs when i % n == k); MUTANTS_SHARD= runs every mutant (days on
# 2 cores). Results: $(MUTANTS_OUT)/<area>/mutants.out/{caught,missed,timeout,unviable}.txt.
MUTANTS_TREE ?= /tmp/mcmvm-mutants
MUTANTS_OUT ?= out/mutants
MUTANTS_SHARD_BLOCKS ?= 0/40
MUTANTS_SHARD_RULES ?= 0/50
MUTANTS_SHARD_REFCHECK ?= 0/30
MUTANTS_RULE_FILES := rust-models/src/driver/mma.rs rust-models/src/driver/evict.rs \
	rust-models/src/driver/table4.rs rust-models/src/driver/policy.rs \
	rust-models/src/driver/analysis.rs rust-models/src/uvm/lru.rs \
	rust-models/src/uvm/residency.rs rust-models/src/uvm/service.rs
MUTANTS_ARGS := --in-place --profile release --baseline run --sharding round-robin \
	--timeout 300 --build-timeout 1200
shard = $(if $(1),--shard $(1))
mutants:
	@command -v cargo-mutants >/dev/null || $(CARGO) install --locked cargo-mutants
	rm -rf $(MUTANTS_TREE) && mkdir -p $(MUTANTS_TREE) $(MUTANTS_OUT)
	git archive HEAD | tar -x -C $(MUTANTS_TREE)
	out=$(abspath $(MUTANTS_OUT)); cd $(MUTANTS_TREE) && \
	export CARGO_TARGET_DIR=$(MUTANTS_TREE)/target CARGO_PROFILE_RELEASE_INCREMENTAL=true; \
	$(CARGO) mutants $(MUTANTS_ARGS) -p mcmvm-models -f 'rust-models/src/blocks/*.rs' \
		$(call shard,$(MUTANTS_SHARD_BLOCKS)) -o $$out/blocks \
		--test-package mcmvm-models --test-package mcmvm-refcheck -- --lib --test suite -- \
		blocks:: remote_tracker tlb_coalescer access_time_tracker readme_corners coverage; \
	$(CARGO) mutants $(MUTANTS_ARGS) -p mcmvm-models $(addprefix -f ,$(MUTANTS_RULE_FILES)) \
		$(call shard,$(MUTANTS_SHARD_RULES)) -o $$out/rules -- --lib --test suite -- \
		driver mgvm uvm::lru uvm::residency uvm::service uvm_eviction uvm_invariants; \
	$(CARGO) mutants $(MUTANTS_ARGS) -p mcmvm-refcheck \
		$(call shard,$(MUTANTS_SHARD_REFCHECK)) -o $$out/refcheck; \
	for a in blocks rules refcheck; do d=$$out/$$a/mutants.out; \
		printf '%s: caught %s missed %s timeout %s unviable %s\n' $$a \
		$$(cat $$d/caught.txt | wc -l) $$(cat $$d/missed.txt | wc -l) \
		$$(cat $$d/timeout.txt | wc -l) $$(cat $$d/unviable.txt | wc -l); done

build: deps
	$(CARGO) build --release -p mcmvm

# Profile-guided optimisation: an instrumented build runs a training set (below), then the
# release build is compiled with that profile, for this machine's CPU. Same code, same
# results (every simulated number is identical); about 7 % faster on bfs under clap
# (median wall ratio 0.93 in alternating pairs), for three extra builds (~5 minutes). It
# needs the toolchain's llvm-profdata (rustup component llvm-tools, installed here when
# missing); without it, or if any step fails, this falls back to a plain release build
# and says so. Use it with `make run MCMVM=target/pgo/mcmvm`.
build-fast: $(MCMVM_FAST)

$(MCMVM_FAST): $(SOURCES) | deps
	@mkdir -p $(PGO)
	@if $(MAKE) --no-print-directory pgo-build; then \
		echo "mcmvm: profile-guided build in $(MCMVM_FAST)"; \
	else \
		echo "mcmvm: profile-guided build unavailable (above); plain release build instead"; \
		$(CARGO) build --release -p mcmvm && cp target/release/mcmvm $(MCMVM_FAST); \
	fi

# The training set: the default-scale runs the profile should favour (bfs under Forest, sssp
# under SpecForest and blk under Forest on the MCM model — the UVM runs nearest the speed
# target; blk's fault path of replays is like no other run's — bfs and a GEMM under placement
# policies), then every built-in workload of both studies at a small size so no generator,
# policy or model is left cold.
PGO_TRAIN := \
	run --config configs/mcm-4chiplet.toml --workload bfs --policy s64k --uvm forest, \
	run --config configs/mcm-4chiplet.toml --workload sssp --policy s64k --uvm specforest, \
	run --config configs/mcm-4chiplet.toml --workload blk --policy s64k --uvm forest, \
	run --config configs/mcm-4chiplet.toml --workload bfs --policy s64k, \
	run --config configs/mcm-4chiplet.toml --workload gemm-resnet50 --policy clap, \
	sweep --suite forest --scale 0.125 --out $(PGO)/train/forest, \
	sweep --suite clap --scale 0.03 --out $(PGO)/train/clap
# The binary runs where it is built (native code), and no code path catches a panic, so an
# abort is all a panic needs (smaller code around every call; ~3 % on bfs under Forest).
# Thin LTO lets the profile inline across crates (+2–3 % on bfs under Forest, +2 min of
# build); one codegen unit measured 9 % slower.
PGO_FLAGS := -Ctarget-cpu=native -Cpanic=abort
PGO_CARGO := CARGO_PROFILE_RELEASE_LTO=thin $(CARGO)

pgo-build:
	@sysroot=$$(rustc --print sysroot) && host=$$(rustc -vV | sed -n 's/^host: //p') && \
	profdata=$$sysroot/lib/rustlib/$$host/bin/llvm-profdata && \
	if [ ! -x $$profdata ]; then \
		echo "installing the toolchain's llvm-profdata: rustup component add llvm-tools"; \
		rustup component add llvm-tools >/dev/null 2>&1 || rustup component add llvm-tools-preview >/dev/null; \
	fi && [ -x $$profdata ] && \
	rm -rf $(PGO)/profiles && \
	RUSTFLAGS="$(PGO_FLAGS) -Cprofile-generate=$(abspath $(PGO))/profiles" \
		$(PGO_CARGO) build --release -p mcmvm --target-dir $(PGO)/gen && \
	echo "mcmvm: training the profile" && \
	train='$(PGO_TRAIN)' && IFS=, && for cmd in $$train; do \
		IFS=' '; $(PGO)/gen/release/mcmvm $$cmd >/dev/null || exit 1; \
	done && \
	$$profdata merge -o $(PGO)/mcmvm.profdata $(PGO)/profiles && \
	RUSTFLAGS="$(PGO_FLAGS) -Cprofile-use=$(abspath $(PGO))/mcmvm.profdata" \
		$(PGO_CARGO) build --release -p mcmvm --target-dir $(PGO)/use && \
	cp $(PGO)/use/release/mcmvm $(MCMVM_FAST)

deps: .deps-stamp $(LIBERTY)

# apt-get update runs once, and only when something is missing.
.deps-stamp:
	@missing=""; \
	for tp in yosys:yosys verilator:verilator iverilog:iverilog sta:opensta; do \
		command -v $${tp%%:*} >/dev/null || missing="$$missing $${tp#*:}"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@for tp in yosys:yosys verilator:verilator iverilog:iverilog sta:opensta; do \
		command -v $${tp%%:*} >/dev/null || { echo "$${tp%%:*} is still missing: apt-get install $${tp#*:}"; exit 1; }; done
	@touch $@

$(LIBERTY):
	@mkdir -p tools/osu018 tools/deb
	@cd tools/deb && (apt-get download qflow-tech-osu018 >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && apt-get download qflow-tech-osu018; })
	@dpkg-deb -x tools/deb/qflow-tech-osu018_*.deb tools/deb/root
	@cp tools/deb/root/usr/share/qflow/tech/osu018/osu018_stdcells.lib $(LIBERTY)
	@echo "liberty: $(LIBERTY)"

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf out tools .deps-stamp
