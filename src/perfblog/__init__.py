"""perfblog: a Chinese-first, SEO-aware technical blog on MkDocs Material whose numbers come from
executed snippets.

Three layers, imports pointing down only (enforced by import-linter, see pyproject.toml):

    perfblog.generator      read, execute, store and render snippets; the `snippets` plugin
    perfblog.seo            head tags, audit, sitemaps, submission; the `seo` plugin
    perfblog.core           the `blog` entry point, the project loader, shared conventions

``generator`` and ``seo`` both build on ``core`` and never import each other.

Snippets import their recording API from ``perfblog.generator``.
"""
