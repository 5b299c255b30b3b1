# Two entry points (see README): `make demo` and `make test`. Both set up everything they need.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.deps-stamp
EXT_STAMP := $(VENV)/.ext-stamp
RUST_SRC := $(shell find bytecode fx inductor tracer python/src -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

.PHONY: demo test env ext bench bench-quick bench-overhead clean sysdeps

$(STAMP): requirements.txt
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r requirements.txt
	touch $(STAMP)

env: $(STAMP)

# The extension is built once, in release mode, by maturin into the shared target/ directory;
# `cargo test --release` below reuses the same artifacts.
$(EXT_STAMP): $(STAMP) $(RUST_SRC) python/pyproject.toml
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release -q -m python/Cargo.toml
	touch $(EXT_STAMP)

ext: $(EXT_STAMP)

demo: ext
	$(VPY) examples/demo.py

# Headless Chromium and Graphviz let the report tests render pages and draw graphs; without them
# (no root, no apt) those tests skip and the report falls back to DOT text.
sysdeps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v dot >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium graphviz >/dev/null) \
				|| echo "note: could not install chromium/graphviz; their tests will skip"; \
		fi; \
	fi

test: ext sysdeps
	PROPTEST_RNG_SEED=20261202 cargo test --workspace --release
	$(VPY) -m pytest -q tests bench/test_bench_smoke.py

bench: ext
	$(VPY) bench/run.py

bench-quick: ext
	$(VPY) bench/run.py --quick

bench-overhead: ext
	$(VPY) bench/overhead.py

clean:
	rm -rf target $(VENV)
