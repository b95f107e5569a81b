"""Drawing time per figure and in total, in one process, after a first drawing has warmed it up.

Run: python tests/benchmarks/bench_figures.py [--runs N]   (not a timed test: machines differ)
Prints the fastest of N drawings of each figure the site shows and their sum; run it on two
checkouts side by side to compare (the absolute numbers mean little on a shared machine).
"""
import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator import build  # noqa: E402


def jobs() -> list[tuple[str, object]]:
    """(name, a call that draws it) for every figure the site shows."""
    from generator.model.facts import build_facts
    from generator.render.figure_registry import jobs as figure_jobs

    config, profiles = build.load_inputs(ROOT)
    return [(j.name, lambda j=j: j.draw(**j.kwargs)) for j in figure_jobs(build_facts(profiles, config))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.chdir(ROOT)
    todo = jobs()
    todo[0][1]()  # the first drawing pays for importing the drawing code
    total = 0.0
    for name, draw in todo:
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            draw()
            times.append(time.perf_counter() - start)
        best = min(times)  # the least disturbed run: other processes only ever add time
        total += best
        print(f"{name:32s} {best * 1000:7.1f} ms")
    print(f"{'total (' + str(len(todo)) + ' figures)':32s} {total * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
