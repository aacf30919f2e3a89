"""Executable snippets for a blog: run them in Jupyter kernels, freeze their results, embed them in posts.

Snippets import the recording API from here (it lives in ``perfblog.harness``)::

    from perfblog.generator import glue, table, chart, target_device
"""

from perfblog.harness.record import chart, glue, table
from perfblog.harness.target import target_device

__all__ = ["chart", "glue", "table", "target_device"]
