# The two commands of the README: `make site` builds the site, `make test` runs the tests.
# Each creates the virtual environment and installs the pinned dependencies first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: site test lint serve clean browser

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,google]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

site: $(STAMP)
	$(BIN)/mkdocs build --strict

serve: $(STAMP)
	$(BIN)/mkdocs serve

# Debian's chromium for the preview tests (Playwright drives it; no browser download).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

test: $(STAMP) browser
	$(BIN)/ruff check .
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) site
