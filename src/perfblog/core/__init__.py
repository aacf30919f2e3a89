"""The shared core: the `blog` entry point, the one project loader, the one atomic writer, the root error
and the conventions both plugins agree on. It imports neither ``perfblog.generator`` nor ``perfblog.seo``.
"""
