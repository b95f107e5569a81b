"""`build [--out DIR]`: run the whole pipeline and swap the result into place."""
from __future__ import annotations

from pathlib import Path

from ..build import build
from ..paths import BUILD


def add_arguments(p) -> None:
    p.add_argument("--out", default=str(BUILD), help="output folder (default: %(default)s)")


def run(args) -> int:
    report = build(Path.cwd(), Path(args.out))
    print(f"built {args.out}: {report.summary()}")
    return 0
