"""The one exception hierarchy of the `seo` package.

    SeoError
    ├── ConfigError           bad plugin options or front matter (names the file)
    ├── AuditError            the audit cannot read the site it was given
    ├── SitemapError          a sitemap cannot be written or read
    └── SubmitError           a search engine refused a submission
"""

from __future__ import annotations


class SeoError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(SeoError):
    """Plugin options or a page's front matter are invalid."""


class AuditError(SeoError):
    """The audit cannot read its input."""


class SitemapError(SeoError):
    """A sitemap cannot be written or parsed."""


class SubmitError(SeoError):
    """A submission to a search engine failed in a way the user must act on."""
