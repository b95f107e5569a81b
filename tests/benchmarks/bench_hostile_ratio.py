"""Doubling a hostile page must not quadruple the time to render it and check its links (issue 25, item 5).

Run: python tests/benchmarks/bench_hostile_ratio.py
(not a timed test: machines differ, and a loaded machine can stretch one run; tests/test_page_safety.py counts
the same work in Python function calls, which no load changes, but work done inside C (regular expressions,
str methods) shows only here). Each page is rendered at 8,000 and 16,000 repeats, the best of five CPU times
each (5 ms at least), and the ratio must stay under RATIO. The negative control, a deliberately quadratic job (a
scan from each tenth character to the end), must exceed it, else the measurement proves nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

from generator.render.markdown import markdown_renderer, render_markdown  # noqa: E402
from generator.render.markup import RawHtmlError  # noqa: E402
from generator.site.publish import broken_links  # noqa: E402

RATIO = 3.5  # doubling the input: linear work takes about 2x, quadratic 4x
CASES = {
    "unclosed <a href> in a raw <p>": lambda n: "<p>" + '<a href="x" ' * n + "</p>\n",
    "<a href written in a title": lambda n: '<p title="' + "<a href=x " * n + '">hi</p>\n',
    "<table> tags": lambda n: "<table>" * n + "\n",
}


def best_of_five(job) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        job()
        best = min(best, time.process_time() - started)
    return best


def page_seconds(body: str) -> float:
    def job() -> None:
        try:
            html, _ = render_markdown(markdown_renderer(), body)
            broken_links({"index.html": html.encode("utf-8")})
        except RawHtmlError:
            pass

    return best_of_five(job)


def quadratic_seconds(n: int) -> float:
    def job() -> None:
        text = "a" * n
        for i in range(0, n, 10):
            text.find("b", i)

    return best_of_five(job)


def main() -> int:
    failed = 0
    for name, make in CASES.items():
        small, large = page_seconds(make(8000)), page_seconds(make(16000))
        ratio = large / max(small, 0.005)
        verdict = "ok" if ratio < RATIO else "QUADRATIC?"
        failed += verdict != "ok"
        print(f"{name:34} {small * 1000:8.1f} ms -> {large * 1000:8.1f} ms  ratio {ratio:4.2f}  {verdict}")
    small, large = quadratic_seconds(100_000), quadratic_seconds(200_000)
    control = "ok" if large > RATIO * small else "NOT TRIPPED (the measurement proves nothing)"
    failed += control != "ok"
    print(f"{'negative control (quadratic)':34} {small * 1000:8.1f} ms -> {large * 1000:8.1f} ms  {control}")
    print(f"ratio limit {RATIO}; {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
