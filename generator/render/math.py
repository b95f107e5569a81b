"""LaTeX formulas as MathML, converted at build time (latex2mathml): the reader's browser typesets no TeX.

A formula inside a sentence has its \\frac written as a/b (a stacked fraction there shrinks its digits
to about two thirds of the text); a display equation is cut before each top-level =, + or - so that
a phone can wrap it. A formula nested deeper than MAX_DEPTH is refused, and every failure is a
MarkupProblem that names the formula, which the page turns into its file and line.
"""

from __future__ import annotations

import re

from .markup import MarkupProblem

MAX_DEPTH = 50  # braces and \left inside one another; the site's deepest formula has 4
SHOWN = 60  # characters of a formula quoted in a message
_UNKNOWN_MACRO = re.compile(r">\\([A-Za-z]+)<")
_OPENS = re.compile(r"\\left(?![a-zA-Z])|(?<!\\)\{|\\right(?![a-zA-Z])|(?<!\\)\}")


def _cut(formula: str) -> str:
    text = " ".join(formula.split())
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def nesting(tex: str) -> int:
    """How deep braces and \\left...\\right go in a formula."""
    depth = deepest = 0
    for m in _OPENS.finditer(tex):
        depth += 1 if m.group(0) in ("{", "\\left") else -1
        deepest = max(deepest, depth)
    return deepest


def _group(tex: str, i: int) -> tuple[str, int]:
    """The brace group (or single character) starting at tex[i], without its braces, and where it ends."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex) or tex[i] != "{":
        return tex[i : i + 1], i + 1
    depth = 0
    for j in range(i, len(tex)):
        depth += {"{": 1, "}": -1}.get(tex[j], 0)
        if depth == 0:
            return tex[i + 1 : j], j + 1
    return tex[i + 1 :], len(tex)


_FRAC = re.compile(r"\\[dt]?frac(?![a-zA-Z])")
_SIMPLE = re.compile(r"[0-9.]+|\\?[a-zA-Z]+(?:_\{?\w+\}?)?(?:\([^()]*\))?|\\mathbb\{\w\}\[\w\]")


def slash_fractions(tex: str) -> str:
    """\\frac{a}{b} as a/b, for a formula inside a sentence: a stacked fraction there shrinks its digits to
    about two thirds of the text (7 px on a phone); a part with more than one term gets parentheses."""
    out, i = [], 0
    while (m := _FRAC.search(tex, i)) is not None:
        top, j = _group(tex, m.end())
        bottom, j = _group(tex, j)
        parts = []
        for part in (slash_fractions(top), slash_fractions(bottom)):
            part = part.strip()
            parts.append(part if _SIMPLE.fullmatch(part) else f"\\left({part}\\right)")
        out.append(f"{tex[i : m.start()]}{{{parts[0]}/{parts[1]}}}")
        i = j
    return "".join(out) + tex[i:]


_BREAK = re.compile(r"\\left\b|\\right\b|[{}()\[\]]|=|\+|-|\\approx\b|\\le\b|\\ge\b|<|>|\\q?quad\b")


def equation_lines(tex: str) -> list[str]:
    """A display equation cut before each top-level =, +, - or \\quad (never inside braces or brackets),
    so that a phone can wrap it there instead of hiding its end in a scroll box."""
    pieces, start, depth = [], 0, 0
    for m in _BREAK.finditer(tex):
        token = m.group(0)
        if token in ("{", "(", "[", "\\left"):
            depth += 1
        elif token in ("}", ")", "]", "\\right"):
            depth -= 1
        elif depth == 0 and tex[start : m.start()].strip():
            pieces.append(tex[start : m.start()])
            start = m.start()
    pieces.append(tex[start:])
    return [p.strip() for p in pieces if p.strip()]


def _converted(formula: str, tex: str, display: str) -> str:
    from latex2mathml.converter import convert  # imported by the first formula

    try:
        mathml = convert(tex, display=display)
    except RecursionError:
        raise MarkupProblem(f"the formula ${_cut(formula)}$ is nested too deeply to convert", formula) from None
    except Exception as exc:  # latex2mathml's own errors (a missing brace, a double superscript) and any other
        why = f"{type(exc).__name__}{': ' + str(exc).splitlines()[0][:120] if str(exc).strip() else ''}"
        raise MarkupProblem(f"the formula ${_cut(formula)}$ cannot be converted to MathML ({why})", formula) from None
    unknown = _UNKNOWN_MACRO.search(mathml)
    if unknown:  # latex2mathml prints a macro it does not know as its own name: the reader would see "\\foo"
        raise MarkupProblem(f"unknown LaTeX macro \\{unknown.group(1)} in ${formula.strip()}$", f"\\{unknown.group(1)}")
    return mathml


def to_mathml(formula: str, display_mode: bool) -> str:
    """A formula as MathML: inline (its fractions slashed), or display (one <math> per line piece)."""
    if nesting(formula) > MAX_DEPTH:
        raise MarkupProblem(
            f"the formula ${_cut(formula)}$ is nested more than {MAX_DEPTH} levels deep (braces or \\left)", formula
        )
    if not display_mode:
        return _converted(formula, slash_fractions(formula), "inline")
    lines = equation_lines(formula)
    if len(lines) < 2:
        return _converted(formula, formula, "block")
    # One <math> per piece: each keeps display size, and the line may wrap between pieces. An operator
    # that opens a piece stays a binary operator (form="infix"), spaced as it was in the whole equation.
    parts = []
    for n, line in enumerate(lines):
        mathml = _converted(formula, line, "block").replace('display="block"', 'display="block" class="part"', 1)
        if n:
            mathml = mathml.replace("<mo>", '<mo form="infix">', 1)
        parts.append(mathml)
    return "<wbr>".join(parts)


def math_renderer(content: str, options: dict) -> str:
    """dollarmath's renderer: (content, {"display_mode": bool}) -> HTML."""
    return to_mathml(content, bool(options.get("display_mode")))
