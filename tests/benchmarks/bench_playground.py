"""The playground stage, cold: read both corpora, train four models, measure 2 x 8 x 2000 rounds.

Run: python tests/benchmarks/bench_playground.py   (not a timed test: machines differ)

The peer is a fixed counting workload: one np.unique with counts over every n-gram key of both
training texts, for every order the two targets use (the plain way to count them; the trainer itself
now counts them sooner, numbering each window by its prefix, so the stage can come out near 1x).
Stage and floor alternate, PAIRS times each, and the ratio printed is the median of the pairs'
ratios, so the machine's load moves both sides of a pair alike; the stage's own median seconds
(wall and CPU) are printed too. Target: the stage under 1.5 s of a cold build on an idle 2-core
machine (the CPU seconds are the figure to read when other work shares the cores).
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator.playground.ngram import KINDS, encode, gram_keys, make_corpus  # noqa: E402
from generator.site.cache import Cache  # noqa: E402
from generator.site.pipeline import load_inputs  # noqa: E402

PAIRS = 5


def stage(config, profiles, tmp: Path, n: int) -> tuple[float, float]:
    from generator.site.helpers import Helpers
    from generator.site.pipeline import start_playground, train_playground

    wall, cpu = time.perf_counter(), time.process_time()
    cache = Cache(tmp / f"cache-{n}")  # an empty cache: the stage runs cold, in this process (one helper: none)
    train_playground(config, profiles, cache, start_playground(config, cache, Helpers(workers=1)))
    return time.perf_counter() - wall, time.process_time() - cpu


def floor(corpora, orders) -> float:
    start = time.perf_counter()
    for kind, corpus in corpora.items():
        codes = encode(corpus.train, corpus.vocab)
        for g in range(1, orders[kind] + 1):
            np.unique(gram_keys(codes, g, len(corpus.vocab)), return_counts=True)
    return time.perf_counter() - start


def main() -> None:
    import tempfile

    from generator.playground.corpus import load_sources

    config, profiles = load_inputs(ROOT)
    settings = config.playground
    corpora, orders = {}, {}
    for kind in KINDS:
        c = getattr(settings, kind)
        text, _ = load_sources(c.package, c.files, c.books, ROOT / "data", kind)
        corpora[kind], orders[kind] = make_corpus(kind, text), c.target_order
    ratios, walls, cpus = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(PAIRS):
            wall, cpu = stage(config, profiles, Path(tmp), n)
            ratios.append(wall / floor(corpora, orders))
            walls.append(wall)
            cpus.append(cpu)
    print(
        f"playground stage, cold: {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
        f"(median of {PAIRS}); {statistics.median(ratios):.1f}x the counting floor"
    )


if __name__ == "__main__":
    main()
