"""What a build reports (pages, figures drawn or reused, seconds per stage) and how a failure in one of its
stages becomes one line that names the file of ours where it happened."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError

PACKAGE = Path(__file__).resolve().parents[1]

Progress = Callable[[str, int, int], None]


class BuildError(UserError):
    pass


@dataclass
class Report:
    cache: Any  # the build's cache.Cache: what it reused and computed, per kind
    pages: int = 0
    figures: int = 0
    stages: dict[str, float] = field(default_factory=dict)

    def timed(self, stage: str, work: Callable):
        start = time.perf_counter()
        try:
            return work()
        except UserError:
            raise
        except Exception as exc:  # anything else still ends as one line that says where it happened
            raise BuildError(f"{_where(exc)}{stage} stage failed: {type(exc).__name__}: {exc}") from exc
        finally:
            self.stages[stage] = self.stages.get(stage, 0.0) + time.perf_counter() - start

    @property
    def drawn(self) -> int:
        return self.cache.computed["figure"]

    def summary(self) -> str:
        stages = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.stages.items())
        pages = f"{self.pages} page{'s' if self.pages != 1 else ''}"
        what = f"{pages}, {self.figures} figures ({self.drawn} drawn, {self.figures - self.drawn} reused)"
        computed = sorted(kind for kind in self.cache.computed if kind != "figure")
        what += f", computed: {', '.join(computed)}" if computed else ", nothing else computed"
        return f"{what}; {stages}; {sum(self.stages.values()):.2f}s in all"


def _where(exc: BaseException) -> str:
    """'generator/x.py: line N: ' for the deepest frame of ours in the traceback, so the line names a file."""
    import traceback

    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename)
        if PACKAGE in path.parents:
            found = f"{path.relative_to(PACKAGE.parent).as_posix()}: line {frame.lineno}: "
    return found
