"""``python -m perfblog.cli``: `blog` without its script (the tests, `blog` in a fresh interpreter)."""

import sys

from perfblog.cli import main

sys.exit(main())
