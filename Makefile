# Quick start: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
# llama.cpp for the local model is built for any x86-64 with AVX2: a -march=native
# build with AMX/AVX-512 paths crashed on this machine type, and a portable wheel
# can be cached and reused.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_OPENMP=OFF
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
EXAMPLE := examples/livemath/livemath.skm
# `make test` runs the suite on this many pytest-xdist workers, each test file on one worker (its module
# fixtures, a Ray cluster or a corpus replay, are set up once). 2 halves the suite's time on 2 cores;
# TEST_JOBS=0 runs it in one process.
TEST_JOBS ?= 2

VSCODE := editors/vscode

.PHONY: demo test setup system bench experiment docs clean vsix test-vscode tree-sitter

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,local]"
	touch $(STAMP)

setup: $(STAMP)

# Graphviz and Node.js/npm: installed with apt-get when run as root, otherwise named (.ci/system-packages).
system:
	@sh .ci/system-packages

demo: $(STAMP) system
	@echo "== build examples/livemath/SKILL.md offline into a machine"
	mkdir -p .skillc
	$(BIN)/skillc build examples/livemath/SKILL.md -o .skillc/livemath.skm --report
	@echo "== check it"
	$(BIN)/skillc check .skillc/livemath.skm
	$(BIN)/skillc show .skillc/livemath.skm
	@echo "== draw it"
	$(BIN)/skillc dot .skillc/livemath.skm -o .skillc/livemath.dot && echo "wrote .skillc/livemath.dot"
	if command -v dot >/dev/null; then $(BIN)/skillc dot .skillc/livemath.skm -o .skillc/livemath.svg && echo "wrote .skillc/livemath.svg"; fi
	@echo "== run it with the embedded local model (Gemma 3 270M: plumbing, not accuracy)"
	@echo "   (bash runs in .skillc/run; a failed or partial outcome is shown, not hidden: the demo goes on)"
	rm -rf .skillc/run && mkdir -p .skillc/run
	-$(BIN)/skillc run .skillc/livemath.skm --executor local --trace .skillc/livemath.trace.jsonl --workdir .skillc/run \
	  --input task="Which number is 6 times 7? A) 40 B) 42 C) 44 D) 48 E) 52"
	@# The machine's outcome is its own verdict (a judge compares the read-back); this line checks the file itself.
	@if test -f .skillc/run/answer.txt; then a=$$(cat .skillc/run/answer.txt); \
	  if printf %s "$$a" | grep -qx '[A-E]'; then v="a single letter A-E: delivered"; else v="NOT a single letter A-E: not delivered, whatever the outcome says"; fi; \
	  echo "answer.txt holds: $$a ($$v; the right answer is B)"; \
	  else echo "no answer.txt was written"; fi
	@echo "== the hand-written machine of the same skill: check and explore"
	$(BIN)/skillc check $(EXAMPLE)
	$(BIN)/skillc test $(EXAMPLE)
	@echo "== distil reusable skills from TextWorld traces; verify them on held-out games played for real"
	$(BIN)/skillc distill examples/traces/textworld-cooking/train.jsonl \
	  --heldout examples/traces/textworld-cooking/heldout.jsonl --games .skillc/games -o .skillc/library --report

test: $(STAMP) system
	$(BIN)/python -m mypy
	$(BIN)/ruff check skillc bench tools tests
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile

bench: $(STAMP)
	$(BIN)/python bench/parse.py
	$(BIN)/python bench/check_scaling.py
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/tokens.py
	$(BIN)/python bench/lsp.py
	$(BIN)/python bench/build.py
	$(BIN)/python bench/distill_textworld.py --train 200 --heldout 50

# The README experiment: livemath and warehouse on the local model (resumable; about an hour on 2 cores).
experiment: $(STAMP)
	$(BIN)/python bench/experiment.py

docs: $(STAMP)
	$(BIN)/skillc explain --markdown > docs/diagnostics.md
	$(BIN)/skillc grammar --format config-schema -o skillc/_schema/config.schema.json
	for d in examples/*/; do n=$$(basename $$d); test -f $$d$$n.skm || continue; $(BIN)/skillc dot $$d$$n.skm -o docs/machines/$$n.svg; \
	  $(BIN)/pygmentize -l skm -f html -O full,title=$$n.skm,cssfile=skm.css -o docs/machines/$$n.html $$d$$n.skm; done
	@# The site (mkdocs.yml; MkDocs Material from the docs extra, in dev too): a broken link or anchor fails it.
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	@echo "wrote site/ (open site/index.html, or serve it: $(BIN)/mkdocs serve)"

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis

# npm packages of the VS Code extension, reinstalled when the lockfile changes (Node.js 20 and npm).
$(VSCODE)/node_modules/.package-lock.json: $(VSCODE)/package-lock.json
	cd $(VSCODE) && npm ci --ignore-scripts --no-audit --no-fund

# The VS Code extension: grammar and client tests, then editors/vscode/skillc-skm-<version>.vsix.
vsix: $(VSCODE)/node_modules/.package-lock.json
	cd $(VSCODE) && npm test && npm run package

# Only the extension's Node tests (`make test` runs them too, through tests/test_vscode.py).
test-vscode: $(VSCODE)/node_modules/.package-lock.json
	cd $(VSCODE) && npm test

# The tree-sitter grammar (editors/tree-sitter-skm): its generated parser, src/, is committed, so neither users
# nor the tests need the CLI. After editing grammar.js or queries/highlights.scm, regenerate src/ with the
# pinned CLI (npm's tree-sitter-cli fetches its binary from GitHub when installed: this needs the network),
# the Helix queries and the Zed extension's copy; tests/editors/test_tree_sitter.py checks all three. Offline,
# editors/tree-sitter-skm/scripts/generator/build.sh builds the same generator from source (its README says how).
TREE_SITTER := editors/tree-sitter-skm
$(TREE_SITTER)/node_modules/.bin/tree-sitter: $(TREE_SITTER)/package.json
	cd $(TREE_SITTER) && npm install --no-audit --no-fund --no-package-lock
	touch $@

tree-sitter: $(TREE_SITTER)/node_modules/.bin/tree-sitter
	cd $(TREE_SITTER) && npx --no tree-sitter generate --abi 14 --no-bindings
	$(PYTHON) $(TREE_SITTER)/scripts/helix_queries.py
	cp $(TREE_SITTER)/queries/highlights.scm editors/zed/languages/skm/highlights.scm
