"""The figure stage's CPU time, cold (a fresh process: importing matplotlib and the drawing code, then drawing every
figure, light and dark), and each figure's drawing time once warm.

Run: python tests/benchmarks/bench_figures.py [--runs N]   (not a timed test: machines differ)
The facts are computed first and not counted. CPU time (time.process_time) rather than wall time: on a shared
machine other processes add wall time, not CPU time. Run it on two checkouts side by side to compare.
"""

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.chdir(ROOT)
    from generator.model.facts import build_facts
    from generator.render.figure_registry import jobs
    from generator.site.pipeline import load_inputs

    config, profiles = load_inputs(ROOT)
    todo = jobs(build_facts(profiles, config))
    start = time.process_time()
    from generator.render.figures import draw

    for job in todo:
        draw(job)
    print(f"{'cold: import and ' + str(len(todo)) + ' figures':32s} {(time.process_time() - start) * 1000:7.0f} ms CPU")
    total = 0.0
    for job in todo:
        times = []
        for _ in range(args.runs):
            start = time.process_time()
            draw(job)
            times.append(time.process_time() - start)
        total += min(times)
        print(f"{job.name:32s} {min(times) * 1000:7.0f} ms CPU")
    print(f"{'warm total':32s} {total * 1000:7.0f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
