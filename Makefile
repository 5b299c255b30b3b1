# Two entry points (see README): `make demo` and `make test`. Both set up everything they need.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.deps-stamp
EXT_STAMP := $(VENV)/.ext-stamp
RUST_SRC := $(shell find bytecode fx inductor tracer python/src -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

.PHONY: demo test env ext ext312 bench bench-quick bench-overhead clean sysdeps

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

# The CPython 3.12 extension, built on this 3.11-only machine for the GPU machine's 3.12.3
# (../shared/DESIGN.md): pyo3 reads the interpreter facts from a hand-written config file instead
# of running a python3.12, and PYO3_BUILD_EXTENSION_MODULE leaves libpython unlinked (the
# interpreter provides its symbols at import). A target directory of its own keeps the 3.11 build
# intact; it is seeded from target/release once so only the pyo3-dependent crates recompile.
# The .so lands in an ignored folder that `scripts/gpu_suite.sh` puts in front of the package.
CP312_TARGET := target/cp312
CP312_SO := build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so

$(CP312_SO): $(RUST_SRC) scripts/pyo3-cp312.cfg
	@if [ ! -d $(CP312_TARGET)/release ] && [ -d target/release ]; then \
		mkdir -p $(CP312_TARGET) && cp -r target/release $(CP312_TARGET)/release; fi
	PYO3_CONFIG_FILE=$(CURDIR)/scripts/pyo3-cp312.cfg PYO3_BUILD_EXTENSION_MODULE=1 \
		CARGO_TARGET_DIR=$(CURDIR)/$(CP312_TARGET) cargo build --release -p torchferro-python
	mkdir -p $(dir $@)
	cp $(CP312_TARGET)/release/lib_C.so $@

ext312: $(CP312_SO)

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
