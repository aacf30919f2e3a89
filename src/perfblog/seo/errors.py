"""The one exception hierarchy of the `seo` package.

SeoError
├── ConfigError           bad plugin options or front matter (names the file)
│   ├── CardError         no CJK font for social cards, or the configured one draws no Chinese
│   └── DateError         a front-matter date is not one (the build makes it a finding)
├── AuditError            the audit cannot read the site it was given
├── SitemapError          a sitemap cannot be written or read
└── SubmitError           a search engine refused a submission
    ├── EngineRefusedError        the engine answered no (token, site, key)
    ├── EngineUnavailableError    no usable answer after retries
    │   └── EngineUnreachableError    one request got no HTTP answer
    └── SubmitStateError          the state file is unreadable
"""

from __future__ import annotations

from perfblog.core.errors import BlogError


class SeoError(BlogError):
    """Base of every error this package raises on purpose."""


class ConfigError(SeoError):
    """Plugin options or a page's front matter are invalid."""


class CardError(ConfigError):
    """Social cards cannot be drawn: no CJK font was found, or the configured one is unusable."""


class DateError(ConfigError):
    """A front-matter date or time that is not one; the build leaves it out and reports a finding."""


class AuditError(SeoError):
    """The audit cannot read its input."""


class SitemapError(SeoError):
    """A sitemap cannot be written or parsed."""


class SubmitError(SeoError):
    """A submission to a search engine failed in a way the user must act on."""


# --- submission (seo/submit/) ---------------------------------------------------------------------


class EngineRefusedError(SubmitError):
    """The engine answered and said no (bad token, unverified site, key mismatch): fix the input."""


class EngineUnavailableError(SubmitError):
    """No usable answer after bounded retries (5xx, 429, timeouts): try again later."""


class EngineUnreachableError(EngineUnavailableError):
    """One request got no HTTP answer at all (connection refused, timeout); the message is redacted."""


class SubmitStateError(SubmitError):
    """The submission state file cannot be read or written (names the file)."""
