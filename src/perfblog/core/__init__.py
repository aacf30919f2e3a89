"""The shared core: the one project loader, the one atomic writer, the root error, what every `blog`
subcommand shares and the conventions both plugins agree on. It imports no other part of perfblog.
"""
