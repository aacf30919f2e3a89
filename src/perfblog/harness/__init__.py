"""The harness: the one API a snippet imports inside its kernel.

Recording (``record``: ``glue``, ``table``, ``chart``), the device to measure on (``target``), measuring
(``compare``: candidates in interleaved rounds; ``clocks``, ``compilation``, ``stats``), the verdict rule
(``verdict``), the tables' wording (``words``) and the kernel's provenance probe (``probe``). It imports
nothing build-side (an import-linter contract): every file it imports is in every snippet's result key.
Snippets import it through ``perfblog.generator`` and ``perfblog.generator.bench``.
"""
