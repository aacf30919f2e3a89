"""Stage 4, rendering: the embeds that turn stored results into a post's Markdown and HTML (outputs,
tables, charts, verdicts, provenance), in the sandboxed template, everything from a result made inert."""
