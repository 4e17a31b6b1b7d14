# memstrata: `make run` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint format typecheck bench clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/memstrata serve

# `make test` runs the suite on parallel workers (pytest-xdist): one per core, at most four
# (each worker may start servers, a browser and database connections). TEST_WORKERS=0 runs it
# serially in one process; PYTEST_ARGS adds pytest options, e.g.
# `make test TEST_WORKERS=0 PYTEST_ARGS='-x tests/e2e'`.
TEST_WORKERS ?= auto
PYTEST_ARGS  ?=

test: $(STAMP) browser
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --maxprocesses 4 $(PYTEST_ARGS)

# The workbench's browser tests (tests/e2e/web) drive Debian's chromium through Playwright
# (never a downloaded browser) and need a CJK font to draw Chinese. Run as root, this installs
# what is missing with apt-get; otherwise it says what to install and those tests skip.
BROWSER_PACKAGES := chromium
CJK_FONT_PACKAGE := fonts-wqy-microhei
APT_INSTALL := DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q

browser:
	@missing=""; \
	if [ -z "$$MEMSTRATA_CHROMIUM" ] && ! command -v chromium >/dev/null 2>&1 \
	  && ! command -v chromium-browser >/dev/null 2>&1; then missing="$(BROWSER_PACKAGES)"; fi; \
	if ! fc-list 2>/dev/null | grep -qiE 'wenquanyi|noto sans cjk|source han sans|droid sans fallback'; then \
	  missing="$$missing $(CJK_FONT_PACKAGE)"; fi; \
	missing=$$(echo $$missing); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing $$missing for the workbench's browser tests (apt-get)"; \
	  $(APT_INSTALL) $$missing >/dev/null 2>&1 \
	  || { apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null 2>&1 && $(APT_INSTALL) $$missing >/dev/null 2>&1; } \
	  || echo "could not install $$missing: the workbench's browser tests will skip"; \
	else \
	  echo "the workbench's browser tests need $$missing: run 'sudo apt-get install $$missing'" \
	    "(or set MEMSTRATA_CHROMIUM to a Chromium binary); until then they skip"; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
