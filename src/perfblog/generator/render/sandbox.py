"""The template environment of posts: Jinja's immutable sandbox, stricter still, with every cost bounded.

Post Markdown is not trusted: a pull request that touches only a post must not run code on the build
machine (where CI may hold secrets) nor make the build hang or balloon. So a post's template may use
only what the docs list:

- the embed functions (``code``, ``output``, ``table``, ``chart``, ``value``, ``verdict``, ``provenance``),
  the predicates on results (``has_result``, ``verdict_of``), ``range``;
- plain values: literals, names it set, items of lists and mappings, ``loop.index`` and friends;
- statements ``if``, ``for``, ``set`` and the filters and tests in ``FILTERS`` and ``TESTS``.

Checked before compiling, so a violation is an error naming the post and line, not a runtime surprise:
no attribute access (``x.y``) except ``loop``'s counters, no calls but of the functions above, no macros,
imports, includes or recursive loops. At run time the sandbox bounds what is left: loop iterations per
page, the size of any string or list an operator makes, the size of integers, and the page's output.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Iterator
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

#: The template functions that read which results a page shows, for ``<% if %>`` blocks the results
#: choose (a sentence in one is not typed, see ``claims.typed_results``).
PREDICATES = ("has_result", "verdict_of")
#: The embed functions, in the order messages list them (the renderer provides them).
EMBEDS = ("code", "output", "table", "chart", "value", "verdict", "provenance", *PREDICATES)
#: The history of claims across torch versions (``history``): they read version records, never a
#: snippet's shown result, so a page that calls them prepares (runs) nothing for them.
HISTORIES = ("history", "history_chart")
#: Functions a post may call: the embeds, the histories, ``range``, and the renderer's own ``_indent``.
FUNCTIONS = frozenset({*EMBEDS, *HISTORIES, "range", "_indent"})
#: Filters a post may use: none of them can make output much larger than its input.
FILTERS = frozenset({
    "abs", "capitalize", "default", "d", "first", "float", "int", "join", "last", "length", "count", "list",
    "lower", "max", "min", "reverse", "round", "sort", "string", "sum", "title", "trim", "unique", "upper",
})  # fmt: skip
TESTS = frozenset({
    "defined", "undefined", "none", "number", "string", "integer", "float", "boolean", "true", "false",
    "even", "odd", "divisibleby", "eq", "ne", "lt", "le", "gt", "ge", "in", "sequence", "mapping",
    "iterable", "==", "!=", "<", "<=", ">", ">=",
})  # fmt: skip
LOOP_ATTRIBUTES = frozenset({"index", "index0", "revindex", "revindex0", "first", "last", "length",
                             "depth", "previtem", "nextitem"})

#: Loop iterations (all loops of a page together).
MAX_ITERATIONS = 100_000
#: Characters of any one string or items of any one list that an operator or filter makes.
MAX_LENGTH = 1_000_000
#: Characters a page's template may output.
MAX_OUTPUT = 5_000_000
#: Bits of an integer that arithmetic may make.
MAX_INT_BITS = 4096

_STATEMENTS = (nodes.Template, nodes.Output, nodes.If, nodes.For, nodes.Assign, nodes.AssignBlock,
               nodes.With, nodes.Scope, nodes.FilterBlock)
_EXPRESSIONS = (nodes.TemplateData, nodes.Const, nodes.Name, nodes.Call, nodes.Keyword, nodes.List,
                nodes.Tuple, nodes.Dict, nodes.Pair, nodes.Getitem, nodes.Slice, nodes.Filter, nodes.Test,
                nodes.Compare, nodes.Operand, nodes.And, nodes.Or, nodes.Not, nodes.Neg, nodes.Pos,
                nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow,
                nodes.CondExpr, nodes.Concat, nodes.Getattr)


class TemplateRefused(jinja2.TemplateError):
    """A post's template uses something outside the documented embeds; ``lineno`` says where."""

    def __init__(self, message: str, lineno: int) -> None:
        super().__init__(message)
        self.lineno = lineno


class Budget:
    """What one page's render may still spend."""

    def __init__(self) -> None:
        self.iterations = MAX_ITERATIONS

    def loop(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """Each loop iterates through this: past the page's iterations, the render stops."""
        for item in iterable:
            self.iterations -= 1
            if self.iterations < 0:
                raise jinja2.TemplateRuntimeError(f"loops ran over {MAX_ITERATIONS} iterations on this page")
            yield item

    def range(self, *args: int) -> range:
        found = range(*args)
        if len(found) > self.iterations:
            raise jinja2.TemplateRuntimeError(f"range of {len(found)} items is over this page's "
                                              f"{MAX_ITERATIONS} loop iterations")
        return found


class EmbedSandbox(ImmutableSandboxedEnvironment):
    """ImmutableSandboxedEnvironment with no attribute access, the listed filters and bounded operators."""

    intercepted_binops = frozenset({"+", "*", "**", "%", "//", "/"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals.clear()
        self.filters = {name: self.filters[name] for name in FILTERS}
        self.filters["join"] = _join
        self.tests = {name: self.tests[name] for name in TESTS}

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return isinstance(obj, LoopContext) and attr in LOOP_ATTRIBUTES

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "%" and isinstance(left, str):
            raise SecurityError("'%' string formatting is not available; use value(..., fmt)")
        if operator in ("*", "+"):
            _check_size(operator, left, right)
        if (operator == "**" and _int(left) and _int(right) and right > 0 and abs(left) > 1
                and right * math.log2(abs(left)) > MAX_INT_BITS):
            raise SecurityError(f"{left} ** {right} is over {MAX_INT_BITS} bits")
        return super().call_binop(context, operator, left, right)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple)) else None


def _check_size(operator: str, left: Any, right: Any) -> None:
    a, b = _length(left), _length(right)
    if operator == "*":
        if a is not None and _int(right):
            made = a * right
        elif b is not None and _int(left):
            made = b * left
        elif _int(left) and _int(right):
            if abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS:
                raise SecurityError(f"a product over {MAX_INT_BITS} bits")
            return
        else:
            return
    else:
        if a is None or b is None:
            return
        made = a + b
    if made > MAX_LENGTH:
        raise SecurityError(f"'{operator}' would make {made} items (at most {MAX_LENGTH})")


def _join(value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
    """Jinja's ``join`` without attribute lookups, refusing a result over ``MAX_LENGTH``."""
    if attribute is not None:
        raise SecurityError("join(attribute=...) is not available")
    parts = [str(item) for item in value]
    if sum(map(len, parts)) + len(d) * max(len(parts) - 1, 0) > MAX_LENGTH:
        raise SecurityError(f"join would make over {MAX_LENGTH} characters")
    return d.join(parts)


def concat(*parts: Any) -> str:
    """``a ~ b``: the pieces as one string, at most ``MAX_LENGTH`` long."""
    texts = [str(p) for p in parts]
    if sum(map(len, texts)) > MAX_LENGTH:
        raise SecurityError(f"'~' would make over {MAX_LENGTH} characters")
    return "".join(texts)


def check(template: nodes.Template) -> nodes.Template:
    """Refuse what posts may not use; wrap every loop in the page's budget and every ``~`` in ``concat``."""
    for node in template.find_all(nodes.Node):
        _check_node(node)
    for loop in template.find_all(nodes.For):
        loop.iter = nodes.Call(nodes.Name("_loop", "load"), [loop.iter], [], None, None, lineno=loop.lineno)
    for parent in list(template.find_all(nodes.Node)):
        for name, child in parent.iter_fields():
            if isinstance(child, nodes.Concat):
                setattr(parent, name, _concat_call(child))
            elif isinstance(child, list):
                setattr(parent, name, [_concat_call(c) if isinstance(c, nodes.Concat) else c for c in child])
    return template


def _concat_call(node: nodes.Concat) -> nodes.Call:
    return nodes.Call(nodes.Name("_concat", "load"), list(node.nodes), [], None, None, lineno=node.lineno)


def _check_node(node: nodes.Node) -> None:
    line = node.lineno or 1
    if not isinstance(node, (*_STATEMENTS, *_EXPRESSIONS)):
        raise TemplateRefused(f"'{type(node).__name__}' is not available in posts (only the embed functions, "
                              f"if, for, set and plain values)", line)
    if isinstance(node, nodes.Getattr) and not (
            isinstance(node.node, nodes.Name) and node.node.name == "loop" and node.attr in LOOP_ATTRIBUTES):
        raise TemplateRefused(f"attribute access '.{node.attr}' is not available in posts", line)
    if isinstance(node, nodes.Call) and not (
            isinstance(node.node, nodes.Name) and node.node.name in FUNCTIONS):
        called = f"'{node.node.name}'" if isinstance(node.node, nodes.Name) else "this"
        guess = did_you_mean(node.node.name) if isinstance(node.node, nodes.Name) else ""
        raise TemplateRefused(f"{called} is not an embed function{guess}; posts may call only "
                              f"{callable_names()}", line)
    if isinstance(node, nodes.Call) and (node.dyn_args is not None or node.dyn_kwargs is not None):
        raise TemplateRefused("*args and **kwargs are not available in posts", line)
    if isinstance(node, nodes.Filter) and node.name not in FILTERS:
        raise TemplateRefused(f"filter '{node.name}' is not available in posts (available: "
                              f"{', '.join(sorted(FILTERS))})", line)
    if isinstance(node, nodes.Test) and node.name not in TESTS:
        raise TemplateRefused(f"test '{node.name}' is not available in posts", line)
    if isinstance(node, nodes.For) and node.recursive:
        raise TemplateRefused("recursive loops are not available in posts", line)
    if isinstance(node, nodes.Name) and node.name.startswith("_") and node.name != "_indent":
        raise TemplateRefused(f"'{node.name}' is not available in posts", line)


def callable_names() -> str:
    """"code, output, table, chart, value, provenance and range": what a post may call, for messages."""
    return ", ".join(EMBEDS) + " and range"


def did_you_mean(name: str) -> str:
    """ " (did you mean 'code'?)" when ``name`` is a near miss of a function a post may call."""
    near = difflib.get_close_matches(name.lower(), [*EMBEDS, "range"], n=1, cutoff=0.6)
    return f" (did you mean '{near[0]}'?)" if near else ""


def render(template: jinja2.Template, variables: dict[str, Any]) -> str:
    """Render with a fresh budget; the page's output stops at ``MAX_OUTPUT`` characters."""
    budget = Budget()
    out: list[str] = []
    size = 0
    for piece in template.generate(**variables, range=budget.range, _loop=budget.loop, _concat=concat):
        size += len(piece)
        if size > MAX_OUTPUT:
            raise jinja2.TemplateRuntimeError(f"the page's embeds made over {MAX_OUTPUT} characters")
        out.append(piece)
    return "".join(out)
