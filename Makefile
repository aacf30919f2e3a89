# The two commands of the README: `make site` builds the site, `make test` runs the tests (CI: .ci/run).
# `make check` is the fast lane while working: ruff, lint-imports and the tests that need no kernel,
# MkDocs build, browser, torch or fuzzing (markers in pyproject.toml). Each creates the virtual
# environment and installs the pinned dependencies first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Material 9.7+ prints an end-of-life banner on every build; it says nothing about this site.
export NO_MKDOCS_2_WARNING := 1

.PHONY: site test test-oldest test-downloads check docs serve clean browser fonts

$(STAMP): pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt -e '.[material,snippets,torch,test,blogs,google,examples,cluster]'
	touch $(STAMP)

# The other end of the package's ranges: the oldest MkDocs and Material it supports
# (constraints/oldest.txt), in a virtual environment of its own, running the tests that build sites.
OLDEST := .venv-oldest
OLDEST_STAMP := $(OLDEST)/.installed
OLDEST_TESTS := mkdocs and not (kernel or browser or torch or cluster or blogs or downloads)

$(OLDEST_STAMP): pyproject.toml constraints/oldest.txt
	$(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/pip install -q --upgrade pip
	$(OLDEST)/bin/pip install -q -c constraints/oldest.txt -e '.[material,snippets,test]'
	touch $(OLDEST_STAMP)

test-oldest: $(OLDEST_STAMP) fonts
	$(OLDEST)/bin/python -c 'import mkdocs, material; print("oldest lane: mkdocs", mkdocs.__version__, "material", material.__version__)'
	$(OLDEST)/bin/pytest -q -p no:cacheprovider -m "$(OLDEST_TESTS)"

site: $(STAMP) fonts
	$(BIN)/mkdocs build --strict

serve: $(STAMP) fonts
	$(BIN)/mkdocs serve

# Debian packages, installed when missing. apt-get needs root: sudo when not root.
APT_INSTALL = dpkg -s $(1) >/dev/null 2>&1 || { \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$sudo apt-get update -qq && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; }

# A CJK font: the seo plugin draws each page's social card (og:image) with it, and screenshots show
# Chinese. Noto Sans CJK (fonts-noto-cjk) is used instead when installed; elsewhere set seo_card_font.
FONT_PKGS := fonts-wqy-zenhei
fonts:
	@$(call APT_INSTALL,$(FONT_PKGS))

# Debian's chromium for the browser tests (Playwright drives it by path; never `playwright install`).
BROWSER_PKGS := chromium
browser: fonts
	@$(call APT_INSTALL,$(BROWSER_PKGS))

# `make test NO_BROWSER=1`: the suite without the browser tests, on purpose (no chromium needed); the
# summary says how many were left out. Without it, a browser test fails when chromium is missing.
ifdef NO_BROWSER
TEST_NEEDS := fonts
TEST_FLAGS := --no-browser
else
TEST_NEEDS := browser
TEST_FLAGS :=
endif

test: $(STAMP) $(TEST_NEEDS)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/pytest -q -m "not downloads" $(TEST_FLAGS)

# Every snippet's download (.py, one .ipynb) run on the CPU in clean virtual environments of torch and the
# packages its header names, made on demand outside the repository (~/.cache/perfblog/envs/downloads-*)
# and reused: minutes, so `make test` leaves it out and .ci/run calls it after `make test`.
test-downloads: $(STAMP) fonts
	$(BIN)/pytest -q -m downloads --durations=5 tests/blog/test_downloads_run.py

# The slow tests are marked by what they need; everything else runs here in seconds.
FAST_TESTS := not (kernel or mkdocs or browser or torch or fuzz or cluster or downloads)
check: $(STAMP) fonts
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/pytest -q -m "$(FAST_TESTS)"

# The reference pages generated from the code (a test fails while one is stale).
docs: $(STAMP)
	$(BIN)/blog seo rules > docs/seo-rules.md.tmp && mv docs/seo-rules.md.tmp docs/seo-rules.md
	$(BIN)/python -m perfblog.cli.docs docs/configuration.md
	$(BIN)/python -m perfblog.generator.reference docs/notebooks.md
	$(BIN)/python tests/seo_corpus.py --write   # builds and audits the OI-wiki corpus: a minute

# The claim snippets on each torch version of mkdocs.yml's torch_versions, each in its environment under
# ~/.cache/perfblog/envs (docs/versions.md: GBs and minutes a version); never in CI. Commit the records.
versions: $(STAMP)
	$(BIN)/blog run --torch

clean:
	rm -rf $(VENV) $(OLDEST) site
