"""The one exception hierarchy of the `generator` package.

    GeneratorError
    ├── SnippetError          a snippet file cannot be read (names file and line)
    ├── ExecutionError        a snippet ran and failed, timed out or its kernel died
    ├── StoreError            the results store cannot be read or written
    │   ├── ResultFormatError a result document is malformed (names the field)
    │   └── LockError         another `blog run` holds the store
    ├── EmbedError            a post refers to something unknown (names post and line)
    ├── ScaffoldError         `blog new` would overwrite a file or cannot name the post
    └── ExportError           `blog export`: a draft, a post not built or changed since, a bad state file
"""

from __future__ import annotations

from perfblog.core.errors import BlogError


class GeneratorError(BlogError):
    """Base of every error this package raises on purpose."""


class SnippetError(GeneratorError):
    """A snippet file is malformed; the message names the file and line."""


class ExecutionError(GeneratorError):
    """A snippet failed to run to the end."""


class StoreError(GeneratorError):
    """The results store is unreadable or could not be written."""


class LockError(StoreError):
    """Another process is writing the store."""


class EmbedError(GeneratorError):
    """A post's embed names an unknown snippet, cell or value; the message names the post and line."""


class ScaffoldError(GeneratorError):
    """`blog new` refuses to overwrite an existing post or snippet, or has no usable slug."""


class ResultFormatError(StoreError):
    """A result document does not have the result format; ``field`` says where (``cells[0].outputs``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


class ExportError(GeneratorError):
    """`blog export` cannot write a faithful copy of a built post; the message says what to do."""
