"""Cold, no-change, one-page-edit and one-number-edit build times against their budgets.

Run: python tests/benchmarks/bench_build.py [--runs N] [--baseline CHECKOUT]   (not a timed test)
Same as `python -m generator bench`; the budgets are generator.commands.bench.BUDGETS.
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
