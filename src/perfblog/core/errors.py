"""The root of every error perfblog raises on purpose.

    BlogError
    ├── ProjectError          no site here, or its mkdocs.yml cannot be loaded (names the file)
    ├── FontError             no CJK font to draw images with, or the named one draws no Chinese
    ├── perfblog.generator.errors.GeneratorError   (and its subclasses)
    └── perfblog.seo.errors.SeoError               (and its subclasses)

The `blog` command turns any ``BlogError`` into one line on stderr and exit status 2.
"""

from __future__ import annotations


class BlogError(Exception):
    """Base of every error perfblog raises on purpose."""


class ProjectError(BlogError):
    """The site's configuration cannot be found or loaded; the message names the file."""


class FontError(BlogError):
    """No CJK font was found to draw with, or the configured file is no font that draws Chinese."""
