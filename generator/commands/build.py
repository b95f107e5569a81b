"""`build [--out DIR] [--clean]`: run the whole pipeline and swap the result into place.

Unless the stat stamp (uptodate.py) shows that nothing changed since the last build into the same
folder: then it stops before importing the pipeline."""
from __future__ import annotations

import sys
from pathlib import Path

from ..paths import BUILD


def add_arguments(p) -> None:
    p.add_argument("--out", default=str(BUILD), help="output folder (default: %(default)s)")
    p.add_argument("--clean", action="store_true", help="empty the cache first and compute everything again")


def progress_printer(stream=None):
    """Progress on one rewritten line, only where a person watches: a log file gets the summary alone."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return None, lambda: None

    def show(stage: str, done: int, total: int) -> None:
        stream.write(f"\r{stage}: {done}/{total}" if total else f"\r{stage}...")
        stream.write(" " * 8)
        stream.flush()

    def finish() -> None:
        stream.write("\r" + " " * 40 + "\r")
        stream.flush()

    return show, finish


def run(args) -> int:
    if not args.clean:
        from ..site.uptodate import up_to_date

        summary = up_to_date(args.out)
        if summary is not None:
            print(f"built {args.out}: {summary}")
            return 0
    from ..site.pipeline import build

    show, finish = progress_printer()
    try:
        report = build(Path.cwd(), Path(args.out), clean=args.clean, progress=show)
    finally:
        finish()
    print(f"built {args.out}: {report.summary()}")
    return 0
