"""What a build reports (pages and figures made or reused, seconds per stage) and how a failure in one of
its stages becomes one line that names the file of ours where it happened."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

PACKAGE = Path(__file__).resolve().parents[1]

Progress = Callable[[str, int, int], None]


class BuildError(UserError):
    pass


@dataclass
class Report:
    pages: int = 0
    figures: int = 0
    rendered: int = 0
    pages_rendered: int = 0
    pages_beside: bool = False  # rendered in a helper while this process computed the numbers
    reused: int = 0
    facts_reused: bool = False
    site_reused: bool = False
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

    def summary(self) -> str:
        stages = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.stages.items())
        pages = f"{self.pages} page{'s' if self.pages != 1 else ''}"
        if self.site_reused:
            what = f"{pages}, {self.figures} figures, all reused: no source changed"
        else:
            analysis_note = "analysis reused" if self.facts_reused else "analysis computed"
            what = f"{pages}, {self.figures} figures ({self.rendered} rendered, {self.reused} reused), {analysis_note}"
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
