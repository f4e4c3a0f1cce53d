"""The one code generator behind compiled flattening and emulation (and backends).

>>> from spacealg.core.codegen import Generator
>>> gen = Generator("double")
>>> two = gen.bind(2)
>>> gen.line(f"return x * {two}")
>>> f = gen.function("def double(x):")
>>> f(21)
42
>>> import inspect; print(inspect.getsource(f).strip())
def double(x):
    return x * _c0

A :class:`Generator` collects the lines of straight-line functions and the constants they
use (:meth:`bind` gives each constant a name), then compiles them. The source is
registered with :mod:`linecache` under a file name naming what it was generated for, so
tracebacks, ``inspect.getsource`` and debuggers show the generated lines; the entry is
removed when the compiled function is collected (generated code never pins memory).
Laws: a compiled function's ``__code__.co_filename`` is a ``linecache`` entry holding its
source while the function lives.
"""

from __future__ import annotations

import itertools
import linecache
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Generator"]

_COUNTER = itertools.count()


class Generator:
    """Lines and constants of generated functions; ``what`` names them in tracebacks."""

    def __init__(self, what: str) -> None:
        self.what = what if len(what) <= 80 else what[:77] + "..."
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {"np": np, "int": int, "float": float, "ValueError": ValueError}
        self._bound: dict[int, str] = {}
        self._constants = 0

    def bind(self, value: Any) -> str:
        """A name for the constant ``value`` in the generated code (one per object)."""
        name = self._bound.get(id(value))
        if name is not None and self.namespace[name] is value:
            return name
        name = f"_c{self._constants}"
        self._constants += 1
        self.namespace[name] = value
        self._bound[id(value)] = name
        return name

    def key(self, key: Any) -> str:
        """A subscript expression for a dict key or tuple index."""
        return repr(key) if type(key) in (int, str) else self.bind(key)

    def line(self, text: str) -> None:
        """Appends a line to the body of the next :meth:`function` (indented once)."""
        self.lines.append("    " + text)

    def function(self, header: str, lines: list[str] | None = None, factory: bool = False) -> Callable[..., Any]:
        """Compiles ``header`` over ``lines`` (default: the collected ones, then cleared)
        and returns the function it defines (``factory``: the function that one returns,
        called without arguments; for closures holding state in cells)."""
        if lines is None:
            body, self.lines = self.lines, []
        else:
            body = ["    " + line for line in lines]
        source = "\n".join([header, *(body or ["    pass"])]) + "\n"
        name = header.split()[1].split("(")[0]
        filename = f"<spacealg generated {next(_COUNTER)}: {name} for {self.what}>"
        exec(compile(source, filename, "exec"), self.namespace)
        function: Callable[..., Any] = self.namespace[name]
        if factory:
            function = function()
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        weakref.finalize(function, linecache.cache.pop, filename, None)
        return function
