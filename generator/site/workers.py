"""The figure stage (draw what the cache lacks) and the helpers that run slow work beside the build.

Figures are drawn here, in this process (matplotlib, about a tenth of a second each; the cache keeps
them). The playground's training is the slow part of a cold build; each of
its two kinds runs in a helper, a forked process that starts with our modules already imported,
while this process analyses, draws and renders. A helper ends as soon as the build that started it
is gone.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cache import Cache, digest, module_closure, source_digest
from .report import BuildError, Progress, Report, _where

if TYPE_CHECKING:
    from ..model.facts import Facts, FigureRef
    from ..render.figure_registry import FigureJob


@dataclass(frozen=True)
class RenderedFigure:
    """What templates and the manifest read from a figure; figures.Figure's fields without importing the drawing code."""
    name: str
    svg: str
    alt: str
    caption: str


def figure_code() -> str:
    """The drawing code's identity: figures.py and what it imports (its words, the palette)."""
    return digest(source_digest(*module_closure("render.figures")))


def draw(job: FigureJob) -> tuple[str, str, str, str] | str:
    """Draw one figure (render.figures.draw). A failure comes back as its one-line message, not a traceback."""
    from ..render.figures import FigureError
    from ..render.figures import draw as draw_figure

    try:
        name, svg, _dark, alt, caption = draw_figure(job)  # the dark variant is palette.dark(svg): made again below
    except FigureError as exc:
        return str(exc)
    return (name, svg, alt, caption)


ORPHAN_CHECK_SECONDS = 0.2


def _exit_with_parent(creator: int, method: str) -> None:
    """End this helper as soon as the process that started it is gone.

    A helper killed with its build would otherwise train on, adopted by PID 1. A daemon thread watches
    getppid(): when the parent dies, the helper is re-parented and the thread ends the process. It
    watches the parent, not one thread of it (prctl's death signal would follow the thread)."""
    parent = os.getppid()
    if method != "forkserver" and parent != creator:  # the build died before this worker got here
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _can_fork() -> bool:
    """Forking is safe only while this process runs no other thread (a lock held there stays held in the child)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _helper_main(send, creator: int, function: Callable, args: tuple) -> None:
    _exit_with_parent(creator, "fork")
    try:
        outcome = ("ok", function(*args))
    except BaseException as exc:  # sent back whole: the build raises it as if it had happened here
        outcome = ("error", exc)
    send.send(outcome)
    send.close()


class Helper:
    """One forked process running one function, its result read back through a pipe. A plain process
    rather than a pool: a pool's management thread would make every later fork unsafe."""

    def __init__(self, function: Callable, args: tuple):
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.receive, send = context.Pipe(duplex=False)
        self.process = context.Process(target=_helper_main, args=(send, os.getpid(), function, args), daemon=True)
        self.process.start()
        send.close()

    def result(self):
        try:
            status, value = self.receive.recv()
        except EOFError:
            status, value = "died", None
        finally:
            self.receive.close()
            self.process.join()
        if status == "died":
            raise BuildError(f"a worker process ended without its result (exit status {self.process.exitcode})")
        if status == "error":
            raise value
        return value

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.receive.close()


class Waiting:
    """A forked process that gets ready at once, ready = prepare(*early) (imports, reading files), and then
    waits for the rest of its arguments, which this process is still computing; it then runs work(ready,
    *late) and sends back the result, or the exception raised (by either), which result() raises here as if
    it had happened here.

    Plain os.fork and two pipes, not multiprocessing (whose import and start cost more than the work that
    overlaps). The helper ends when its arguments' pipe closes unsent, so a build that dies takes it along;
    stop() ends it at once. Start it only where can_fork() says forking is safe."""

    def __init__(self, prepare: Callable, work: Callable, *early):
        import pickle

        args_in, self._args_out = os.pipe()
        self._result_in, result_out = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the helper: never returns
            status = 1
            try:
                os.close(self._args_out)
                os.close(self._result_in)
                try:
                    ready = prepare(*early)
                    with os.fdopen(args_in, "rb") as fh:
                        late = pickle.load(fh)
                    outcome = ("ok", work(ready, *late))
                except EOFError:  # nothing sent: the build has gone, or stopped this helper
                    os._exit(1)
                except BaseException as exc:  # sent back whole: the build raises it as its own
                    outcome = ("error", exc)
                try:
                    data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
                    if outcome[0] == "error":
                        pickle.loads(data)  # some exceptions pickle but cannot be made again from their args
                except Exception as failure:  # such an exception (or result) still comes back, as one line
                    exc = outcome[1] if outcome[0] == "error" else failure
                    data = pickle.dumps(("error", BuildError(f"{_where(exc)}{type(exc).__name__}: {exc}")))
                with os.fdopen(result_out, "wb") as fh:
                    fh.write(data)
                status = 0
            finally:
                os._exit(status)
        os.close(args_in)
        os.close(result_out)

    def send(self, *late) -> None:
        import pickle

        data = pickle.dumps(late, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            with os.fdopen(self._args_out, "wb") as fh:
                self._args_out = None
                fh.write(data)
        except BrokenPipeError:  # it failed getting ready and has ended: result() says why
            pass

    def result(self):
        import pickle

        with os.fdopen(self._result_in, "rb") as fh:
            self._result_in = None
            data = fh.read()
        _, code = os.waitpid(self.pid, 0)
        self.pid = None
        if not data:
            raise BuildError(f"a helper process ended without its result (wait status {code})")
        status, value = pickle.loads(data)
        if status == "error":
            raise value
        return value

    def stop(self) -> None:
        """End the helper, whatever it is doing (nothing, once result() has returned)."""
        import signal

        for fd in (self._args_out, self._result_in):
            if fd is not None:
                os.close(fd)
        self._args_out = self._result_in = None
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = None


def can_fork() -> bool:
    """Forking is safe only while this process runs no other thread (a lock held there stays held in the child)."""
    return hasattr(os, "fork") and threading.active_count() == 1


class FigureStage:
    """Draws what the cache lacks, here; runs helpers (see helper()) when more than one process may work."""

    def __init__(self, cache: Cache, workers: int, progress: Progress | None = None):
        self.cache, self.workers, self.progress = cache, workers, progress
        self.helpers: list[Helper] = []
        self.code = figure_code()

    def helper(self, function: Callable, *args) -> Helper | None:
        """Run function(*args) in a process of its own, started at once, while this process goes on. None
        with one worker or where forking is not safe; the caller then does the work itself."""
        if self.workers < 2 or not _can_fork():
            return None
        helper = Helper(function, args)
        self.helpers.append(helper)
        return helper

    def close(self) -> None:
        for helper in self.helpers:
            helper.stop()
        self.helpers = []

    def key(self, ref: FigureRef) -> str:
        return digest(self.code, ref.function, ref.inputs)

    def run(self, facts: Facts, plan: tuple[FigureRef, ...], report: Report) -> dict[str, RenderedFigure]:
        """Every figure of the plan, in plan order: from the cache, or drawn now and stored."""
        done: dict[str, RenderedFigure] = {}
        missing: list[FigureRef] = []
        for ref in plan:
            hit = self.cache.load("figures", self.key(ref))
            if hit is None:
                missing.append(ref)
            else:
                done[ref.name] = RenderedFigure(*hit)
        report.reused = len(plan) - len(missing)
        report.rendered = len(missing)
        if missing:
            from ..render.figure_registry import jobs

            wanted = {ref.name for ref in missing}
            todo = [job for job in jobs(facts) if job.name in wanted]
            for count, job in enumerate(todo, start=1):
                result = draw(job)
                if isinstance(result, str):
                    raise BuildError(result)
                done[job.name] = RenderedFigure(*result)
                self.cache.store("figures", self.key(job.ref), result)
                if self.progress:
                    self.progress("figures", count, len(todo))
        return {ref.name: done[ref.name] for ref in plan}
