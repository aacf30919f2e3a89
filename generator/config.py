"""The `snippets` plugin's options, declared once: flat names with a prefix per concern."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from generator.device import DEVICES
from generator.resolve import MODES


class _Mode(c.Choice):
    """A mode; YAML reads a bare `off` as false, which means the mode `off` here."""

    def run_validation(self, value: object) -> str:
        return super().run_validation("off" if value is False else value)


class SnippetsConfig(base.Config):
    """Options of ``plugins: - snippets:`` in mkdocs.yml; paths are relative to mkdocs.yml."""

    snippets_dir = c.Type(str, default="snippets")
    results_dir = c.Type(str, default="snippets/_results")
    #: auto | frozen | force | off; the environment variable BLOG_EXEC_MODE wins over it.
    exec_mode = _Mode(MODES, default="auto")
    exec_timeout_cell = c.Type((int, float), default=600)
    exec_timeout_snippet = c.Type((int, float), default=1800)
    exec_device = c.Choice(DEVICES, default="auto")
    #: Where the JSON execution report goes; empty: <site_dir>/_snippets/report.json.
    report_path = c.Type(str, default="")
