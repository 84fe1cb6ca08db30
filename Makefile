# mcmvm — first commands on a fresh Debian/Ubuntu machine with Rust: `make run`, `make test`.
# The Makefile installs what it needs: yosys, verilator, iverilog from Debian, and the
# osu018 Liberty file (package qflow-tech-osu018, unpacked locally, without all of qflow).

SHELL := /bin/bash
CARGO ?= cargo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
LIBERTY := tools/osu018/osu018_stdcells.lib
MCMVM := target/release/mcmvm
export MCMVM_LIBERTY := $(abspath $(LIBERTY))

.PHONY: run test deps build hw sweep-clap sweep-forest sensitivity test-exhaustive bench fmt clippy clean

run: deps build
	$(MCMVM) hw --out out
	$(MCMVM) sweep --suite clap --out out/clap
	$(MCMVM) sweep --suite forest --out out/forest

# Forest's thresholds one at a time (~190 runs; minutes on 2 cores), not part of `make run`.
sensitivity: deps build
	$(MCMVM) sweep --suite forest-sensitivity --out out/forest-sensitivity

test: deps
	$(CARGO) test --release --workspace
	@echo "make test: all suites passed"

# Slow, exhaustive runs; not part of `make test`.
test-exhaustive: deps
	MCMVM_EXHAUSTIVE=1 $(CARGO) test --release --workspace -- --include-ignored

bench: deps
	$(CARGO) bench --workspace

build: deps
	$(CARGO) build --release

deps: .deps-stamp $(LIBERTY)

# apt-get update runs once, and only when something is missing.
.deps-stamp:
	@missing=""; \
	for t in yosys verilator iverilog; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@for t in yosys verilator iverilog; do command -v $$t >/dev/null || { echo "$$t is still missing: apt-get install $$t"; exit 1; }; done
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
