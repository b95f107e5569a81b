"""Drawing time per figure and in total, in one process, after matplotlib is imported and warmed up.

Run: python tests/benchmarks/bench_figures.py [--runs N]   (not a timed test: machines differ)
Prints the median of N drawings of each figure the site shows and their sum; run it on two
checkouts side by side to compare (the absolute numbers mean little on a shared machine).
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator import build  # noqa: E402


def jobs():
    config, profiles = build.load_inputs(ROOT)
    from generator.context import build_context
    ctx = build_context(profiles, config)
    return build.figure_jobs(ctx)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.chdir(ROOT)
    todo = jobs()
    build.warm_up()
    build.draw(todo[0].function, todo[0].kwargs)  # first drawing pays font loading
    total = 0.0
    for job in todo:
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            result = build.draw(job.function, job.kwargs)
            times.append(time.perf_counter() - start)
            if isinstance(result, str):
                print(result, file=sys.stderr)
                return 1
        median = statistics.median(times)
        total += median
        print(f"{job.name:32s} {median * 1000:7.1f} ms")
    print(f"{'total (' + str(len(todo)) + ' figures)':32s} {total * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
