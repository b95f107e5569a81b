"""The sandbox pages and templates run in: they read data and call the functions written for them, within budgets.

Jinja's sandbox already refuses attributes starting with "_" and changes to lists and dicts. On top of it:
- an attribute may be read only from data (text, numbers, lists, mappings, the frozen dataclasses of
  facts and views, a Record) and never yields, nor may a call return, a path, a file, a module or a class;
- budgets, each refused in one line naming the page: `range` up to MAX_RANGE; MAX_ITERATIONS loop turns in
  one render; no list or mapping over MAX_ITEMS and no text over MAX_CHARS made by `*`, `+`, `~`, `%`, a call
  or a filter; no width, count or number over MAX_SIZE given to a filter, a method or a format; no power over
  MAX_POWER_BITS bits; a render over RENDER_SECONDS is stopped.
Loops are counted by compiling each `{% for %}` to iterate through Budget.turns (PageSandbox's code
generator), the one place Jinja offers no hook of its own.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import re
import time
from collections.abc import Mapping
from fractions import Fraction
from pathlib import PurePath
from types import MappingProxyType, ModuleType
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

MAX_RANGE = 100_000  # Jinja's own limit for range(), kept
MAX_ITERATIONS = 1_000_000  # loop turns in one render of a page, a widget or the layout
MAX_SIZE = 2_000_000  # a width, count or number asked of a filter, method or format: a page may be at most 2 MB
MAX_ITEMS = 2_000_000  # items of a list, tuple or mapping
MAX_CHARS = 64_000_000  # characters of text: a page's HTML may be many times its 2 MB source (heading anchors)
MAX_POWER_BITS = 100_000  # the size of a power's result: 2 ** 100_000 has 30,103 digits
RENDER_SECONDS = 10.0
_BIG_WIDTH = re.compile(r"\d{7,}")  # a width or precision in a format string that asks for MAX_SIZE or more
PLAIN = (str, int, float, Fraction, tuple, list, dict, MappingProxyType, range, type(None))
POWERFUL = (PurePath, io.IOBase, ModuleType, type)


class BudgetError(SecurityError):
    """A page or template asked for more than its budget."""


class Record:
    """Named plain values, read as `record.name` in a template; nothing else (no methods, no changes)."""

    def __init__(self, **fields: Any):
        self.__dict__.update(fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Record cannot be changed ({name})")

    def __repr__(self) -> str:
        return f"Record({', '.join(sorted(self.__dict__))})"


def plain(value: Any) -> Any:
    """`value` as templates may see it: dataclasses (a configuration, say) as Records of their fields, paths as
    text, sequences as tuples, mappings as read-only mappings; text, numbers and None as they are."""
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, (str, int, float, Fraction, type(None))):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return Record(**{f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, Mapping):
        return MappingProxyType({k: plain(v) for k, v in value.items()})
    if isinstance(value, (tuple, list, frozenset, set)):
        return tuple(plain(v) for v in value)
    raise TypeError(f"{type(value).__name__} is not data a template may read")


def readable(obj: Any) -> bool:
    """Whether a template may read attributes of `obj`: data, our frozen dataclasses, and Jinja's own helpers
    (loop, namespace, macros)."""
    if isinstance(obj, (*PLAIN, Record, Markup)):
        return True
    cls = type(obj)
    if dataclasses.is_dataclass(obj) and cls.__module__.startswith("generator."):
        return cls.__dataclass_params__.frozen  # a Page or a setting is not handed over as itself
    return cls.__module__.startswith("jinja2.")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, tuple, list, dict, MappingProxyType)) else 0


def _limit(value: Any) -> int:
    return MAX_CHARS if isinstance(value, str) else MAX_ITEMS


def _ints(args, kwargs) -> list[int]:
    return [a for a in (*args, *kwargs.values()) if isinstance(a, int) and not isinstance(a, bool)]


class Budget:
    """What one render may still spend: loop turns and time."""

    def __init__(self):
        self.deadline = time.monotonic() + RENDER_SECONDS
        self.turns_left = MAX_ITERATIONS

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise BudgetError(f"the page took over {RENDER_SECONDS:g} seconds to render (the limit for a page)")

    def turns(self, iterable: Any):
        """`iterable`, counting each turn of the loop against the budget."""
        for n, item in enumerate(iterable):
            self.turns_left -= 1
            if self.turns_left < 0:
                raise BudgetError(f"the page's loops turn more than {MAX_ITERATIONS:,} times (the limit for a page)")
            if n % 64 == 0:
                self.tick()
            yield item


def too_big(size: int, text: bool) -> BudgetError:
    if text:
        return BudgetError(f"a text of {size:,} characters is too big for a page (the limit is {MAX_CHARS:,})")
    return BudgetError(f"a list or mapping of {size:,} items is too big for a page (the limit is {MAX_ITEMS:,})")


def checked(value: Any) -> Any:
    if _size(value) > _limit(value):
        raise too_big(_size(value), isinstance(value, str))
    return value


def _power_bits(base: Any, exponent: Any) -> int:
    if not isinstance(exponent, int) or isinstance(base, float) or isinstance(exponent, bool):
        return 0  # a float power overflows quickly, or a Fraction exponent gives a float
    if isinstance(base, Fraction):
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
    elif isinstance(base, int):
        bits = max(abs(base).bit_length(), 1)
    else:
        return 0
    return bits * abs(exponent)


def _check_format(text: str) -> None:
    if _BIG_WIDTH.search(text):
        raise BudgetError(f"a format asks for a width of a million characters or more ({text[:40]!r})")


class _BudgetedCode(CodeGenerator):
    """Jinja's code generator, with every `{% for %}` iterating through the budget and every `~` checked."""

    def visit_For(self, node: nodes.For, frame) -> None:
        counted = nodes.Call(
            nodes.EnvironmentAttribute("loop_turns", lineno=node.lineno),
            [node.iter],
            [],
            None,
            None,
            lineno=node.lineno,
        )
        counted.set_environment(self.environment)
        node.iter = counted
        super().visit_For(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame) -> None:
        self.write("environment.sized(")
        super().visit_Concat(node, frame)
        self.write(")")


def _filter(name: str, function):
    """A filter that refuses to be asked for MAX_SIZE or more (a width, a count), and to return more."""
    value_at = 1 if getattr(function, "jinja_pass_arg", None) else 0  # after the context, when it is passed

    @functools.wraps(function)
    def budgeted(*args, **kwargs):
        if any(abs(n) > MAX_SIZE for n in _ints(args[value_at + 1 :], kwargs)):
            raise BudgetError(f"the filter {name!r} was given a number over {MAX_SIZE:,}")
        if name == "format" and len(args) > value_at and isinstance(args[value_at], str):
            _check_format(args[value_at])
        if name == "join" and len(args) > value_at:
            items = list(args[value_at])
            joiner = args[value_at + 1] if len(args) > value_at + 1 else kwargs.get("d", "")
            total = sum(map(_size, items)) + _size(joiner) * len(items)
            if total > MAX_CHARS:
                raise too_big(total, True)
            args = (*args[:value_at], items, *args[value_at + 1 :])
        return checked(function(*args, **kwargs))

    return budgeted


class PageSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with the reading rules and budgets of this module's docstring."""

    code_generator_class = _BudgetedCode
    intercepted_binops = frozenset({"+", "*", "**", "%", "//"})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.budget = Budget()
        self.filters.update({name: _filter(name, f) for name, f in self.filters.items()})

    def start_render(self) -> None:
        """A fresh budget for the next page, widget set or layout."""
        self.budget = Budget()

    def loop_turns(self, iterable: Any):
        return self.budget.turns(iterable)

    def sized(self, value: Any) -> Any:
        return checked(value)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        self.budget.tick()
        return super().is_safe_attribute(obj, attr, value) and readable(obj) and not isinstance(value, POWERFUL)

    def call_binop(self, context, operator: str, left: Any, right: Any) -> Any:
        self.budget.tick()
        if operator == "**" and _power_bits(left, right) > MAX_POWER_BITS:
            raise BudgetError(f"{left!r} ** {right!r} is too big a number for a page")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if _size(seq) and isinstance(n, int) and _size(seq) * n > _limit(seq):
                    raise too_big(_size(seq) * n, isinstance(seq, str))
            bits = left.bit_length() + right.bit_length() if isinstance(left, int) and isinstance(right, int) else 0
            if bits > MAX_POWER_BITS:
                raise BudgetError(f"a product of {bits:,} bits is too big a number for a page")
        if operator == "+" and _size(left) and _size(right) and _size(left) + _size(right) > _limit(left):
            raise too_big(_size(left) + _size(right), isinstance(left, str))
        if operator == "%" and isinstance(left, str):
            _check_format(left)
            if any(abs(n) > MAX_SIZE for n in _ints(right if isinstance(right, tuple) else (right,), {})):
                raise BudgetError(f"a format was given a number over {MAX_SIZE:,}")
        return checked(super().call_binop(context, operator, left, right))

    def call(__self, __context, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's signature)
        __self.budget.tick()
        if isinstance(__obj, type) and __obj is not dict and not __obj.__module__.startswith("jinja2."):
            raise SecurityError(f"a page or template cannot call {__obj.__name__}")
        ours = str(getattr(__obj, "__module__", "") or "").startswith("generator.")
        if not ours and any(abs(n) > MAX_SIZE for n in _ints(args, kwargs)):  # a width, a count, a repeat
            raise BudgetError(f"{getattr(__obj, '__name__', 'a call')} was given a number over {MAX_SIZE:,}")
        owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
        if isinstance(owner, str):  # str methods: format, ljust, center, zfill, replace, join, ...
            if getattr(__obj, "__name__", "") in ("format", "format_map"):
                _check_format(owner)
            if getattr(__obj, "__name__", "") == "replace" and len(args) >= 2:
                grow = (owner.count(args[0]) if args[0] else len(owner) + 1) * len(str(args[1]))
                if len(owner) + grow > MAX_CHARS:
                    raise too_big(len(owner) + grow, True)
            if getattr(__obj, "__name__", "") == "join" and args:
                parts = list(args[0])
                total = sum(map(_size, parts)) + len(owner) * len(parts)
                if total > MAX_CHARS:
                    raise too_big(total, True)
                args = (parts, *args[1:])
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(result, POWERFUL):
            raise SecurityError(f"a page or template cannot be handed a {type(result).__name__}")
        return checked(result)


def sandbox(loader: jinja2.BaseLoader, filters: Mapping[str, Any], globals_: Mapping[str, Any]) -> PageSandbox:
    env = PageSandbox(
        loader=loader,
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update({name: _filter(name, f) for name, f in filters.items()})
    del env.globals["lipsum"]  # placeholder text: pages have their own words, and it can be asked for gigabytes
    env.globals.update(globals_)
    return env
