"""Stage 1, the source: a snippet file read into named cells, their flags, tags and header options, and
the hashes that key its results (any jupytext format, or a notebook)."""
