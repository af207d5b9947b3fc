PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps: `make run` installs what the daemon, the commands and the demo need;
# `make test` (and lint, format) adds the extras: the test tools and the real clients
# they drive, the report's plots and the sweeps' cluster.
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test
STAMP_MUTATE := $(VENV)/.installed-mutate

.PHONY: run test bench lint format clean mutate

$(STAMP_RUN): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	$(BIN)/python -c "$$PLAIN_PTH"
	$(BIN)/batchd warm
	$(BIN)/python -m compileall -q daemon client
	touch $(STAMP_RUN)

$(STAMP_TEST): $(STAMP_RUN)
	$(BIN)/pip install -q -e '.[test,report,sweep]'
	$(BIN)/python -c "$$PLAIN_PTH"
	touch $(STAMP_TEST)

# `batchd warm` compiles the scheduling kernels into numba's cache (__pycache__ beside
# the sources, or NUMBA_CACHE_DIR), so that replays and the daemon only load them.
# compileall writes the modules' bytecode, as an install from a wheel does: on a host
# that writes none at run time (PYTHONDONTWRITEBYTECODE) every command would compile
# the modules it imports, a sixth of a short replay (docs/performance.md).

# setuptools makes this editable install an import hook: a finder module that site
# imports at every start of the venv's Python, with pathlib and importlib.util, which
# is about 10 ms of every qsub or qstat (bench/client_startup.py). Its .pth file
# with the two package roots as plain path entries finds the same packages.
# (editable_mode=compat would put the repository's root on sys.path instead.)
define plain_pth
import glob, os, sysconfig
found = glob.glob(os.path.join(sysconfig.get_path("purelib"), "__editable__.batchd-*.pth"))
if len(found) == 1:
    with open(found[0], "w") as pth:
        pth.write(os.path.abspath("daemon") + "\n" + os.path.abspath("client") + "\n")
else:
    print("Makefile: the editable install's .pth is left as it is:", found or "none found")
endef
$(STAMP_RUN) $(STAMP_TEST) $(STAMP_MUTATE): export PLAIN_PTH = $(plain_pth)

run: $(STAMP_RUN)
	$(BIN)/batchd demo --config conf/hpcline96.toml

test: $(STAMP_TEST)
	$(BIN)/ruff check daemon client tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2

$(STAMP_MUTATE): $(STAMP_TEST)
	$(BIN)/pip install -q -e '.[test,report,sweep,mutate]'
	$(BIN)/python -c "$$PLAIN_PTH"
	touch $(STAMP_MUTATE)

# Mutation testing (docs/testing.md), not part of `make test`: niced, two mutants at a
# time (CHILDREN=1 for one). GROUPS="access model" runs some groups only
# (bench/mutate.py --list shows them); AGAIN=1 runs only the mutants that survived the
# last run of those groups, and ONLY="batchd.model.windows ..." only those of some modules.
# A whole run (not AGAIN) is kept in docs/mutation/runs.json, and every survivor must be
# named on its group's page (bench/mutation_pages.py lists those that are not).
CHILDREN ?= 2
mutate: $(STAMP_MUTATE)
	nice -n 15 $(BIN)/python bench/mutate.py --max-children $(CHILDREN) $(GROUPS) $(if $(AGAIN),--again) $(if $(ONLY),--only $(ONLY))
	$(if $(AGAIN),,$(BIN)/python bench/mutation_pages.py --record $(GROUPS))

bench: $(STAMP_TEST)
	$(BIN)/python bench/replay.py

lint: $(STAMP_TEST)
	$(BIN)/ruff check daemon client tests bench
	$(BIN)/ruff format --check daemon client tests bench
	$(BIN)/mypy

format: $(STAMP_TEST)
	$(BIN)/ruff format daemon client tests bench

clean:
	rm -rf $(VENV) build *.egg-info

# The live Prometheus test (tests/test_prometheus_live.py) needs the Prometheus
# server: install it with apt-get when it is missing and we may (root or
# passwordless sudo); otherwise say why in one line and go on (the test skips).
.PHONY: prometheus
prometheus:
	@sh .ci/install-prometheus

test: prometheus

# The browser tests of the web page (tests/ui/) need Debian's chromium and
# chromium-driver: installed with apt-get like Prometheus when we may, otherwise one
# line says why and the tests skip with the reason.
.PHONY: chromium
chromium:
	@sh .ci/install-chromium

test: chromium
