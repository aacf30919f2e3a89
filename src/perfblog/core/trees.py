"""What both layers do to an lxml tree parsed without lxml.html's element classes (whose per-element
Python calls cost more than the parse): remove an element as lxml.html's `drop_tree` does."""

from __future__ import annotations

from lxml import etree


def drop_tree(element: etree._Element) -> None:
    """Remove an element and what it holds, keeping its tail text; it must have a parent."""
    parent = element.getparent()
    if element.tail:
        previous = element.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + element.tail
        else:
            previous.tail = (previous.tail or "") + element.tail
    parent.remove(element)
