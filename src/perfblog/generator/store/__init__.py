"""Stage 3, results: the typed result and its file format (schema, migrations), the store of one file per
snippet and device class, which result a post shows and why one is stale, the build's report."""
