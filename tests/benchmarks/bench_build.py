"""Cold build and no-change rebuild wall time, medians of several fresh processes.

Run: python tests/benchmarks/bench_build.py [--runs N]   (not a timed test: machines differ)
Same as `python -m generator bench`. Targets on a 2-core machine: cold under 4 s, rebuild under 0.5 s.
"""
import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator.commands import bench  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    bench.add_arguments(parser)
    os.chdir(ROOT)
    sys.exit(bench.run(parser.parse_args()))
