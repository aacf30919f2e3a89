"""`blog submit`: send a built site's new or changed URLs to Baidu, IndexNow engines and Google.

Layers: `sitemaps` reads the built sitemap, `state` remembers what each engine accepted, `transport`
carries HTTP, `base` plans and runs, one module per engine speaks its protocol, `cli` wires the command.
"""
