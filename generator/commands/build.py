"""`build [--out DIR] [--clean]`: run the whole pipeline (site/pipeline.py) and swap the result into place."""

from __future__ import annotations

import signal
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
        stream.write(f"\r{stage}: {done}/{total}" + " " * 8)
        stream.flush()

    def finish() -> None:
        stream.write("\r" + " " * 40 + "\r")
        stream.flush()

    return show, finish


def run(args) -> int:
    from ..site.pipeline import build

    # SIGTERM ends the build as Ctrl-C does (KeyboardInterrupt): the staging folder is removed on the way out
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    show, finish = progress_printer()
    try:
        report = build(Path.cwd(), Path(args.out), clean=args.clean, progress=show)
    finally:
        finish()
    print(f"built {args.out}: {report.summary()}")
    return 0
