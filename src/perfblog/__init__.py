"""perfblog: a Chinese-first, SEO-aware technical blog on MkDocs Material whose numbers come from
executed snippets.

Layers, imports pointing down only (enforced by import-linter, see pyproject.toml):

    perfblog.cli            the `blog` command: every layer's subcommands, `blog init`
    perfblog.generator      read, run, store and render snippets; the `snippets` plugin
    perfblog.seo            head tags, audit, sitemaps, submission; the `seo` plugin
    perfblog.harness        what a snippet imports in its kernel: recording, measuring, verdicts
    perfblog.core           the project loader, the root error, shared conventions

``generator`` and ``seo`` both build on ``core`` and never import each other; the harness imports
nothing else of perfblog. Snippets import it through ``perfblog.generator`` (and ``.bench``).
"""
