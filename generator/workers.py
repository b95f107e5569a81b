"""The build's processes: the figure stage (draw what the cache lacks, in forked workers) and the helpers
that run slow work beside the main process.

Workers are forked where that is safe (no other thread in this process), so they start with our modules
and matplotlib already imported; each one ends as soon as the process that started it is gone.
"""
from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .cache import Cache, digest, module_closure, package_version, source_digest
from .report import BuildError, Progress, Report, _where

if TYPE_CHECKING:  # only a build that draws needs a pool
    from concurrent.futures import Future, ProcessPoolExecutor

    from .facts import Facts, FigureRef
    from .figure_registry import FigureJob


@dataclass(frozen=True)
class RenderedFigure:
    """What templates and the manifest read from a figure; figures.Figure's fields without importing matplotlib."""
    name: str
    svg: str
    alt: str
    caption: str


def figure_code() -> str:
    return digest(source_digest(*module_closure("figures")), package_version("matplotlib"), package_version("numpy"))


def draw(job: FigureJob) -> tuple[str, str, str, str] | str:
    """Draw one figure; runs in a worker. A failure comes back as its one-line message, not a traceback."""
    from .figures import Collision

    try:
        f = job.draw(**job.kwargs)
    except Collision as exc:  # a drawing whose labels collide: the figure code must lay it out differently
        return f"generator/figures.py: {exc}"
    except Exception as exc:
        where = _where(exc) or "generator/figures.py: "
        return f"{where}{job.ref.function}({job.name!r}) failed: {type(exc).__name__}: {exc}"
    return (f.name, f.svg, f.alt, f.caption)


def warm_up() -> None:
    """Import matplotlib (through figures.py) in a worker while the main process computes: once per worker."""
    importlib.import_module(f"{__package__}.figures")


ORPHAN_CHECK_SECONDS = 0.2


def _exit_with_parent(creator: int, method: str) -> None:
    """Worker initializer: end this worker as soon as the process that started it is gone.

    A pool's workers otherwise wait forever on their task pipe when the build is killed with -9 (the
    pipe never reaches end-of-file, since every worker holds a copy of its write end), adopted by
    PID 1. A daemon thread watches getppid(): when the parent dies, the worker is re-parented and the
    thread ends the process. It watches the parent, not one thread of it, so a pool started from a
    thread that later finishes keeps its workers (prctl's death signal would kill them then)."""
    parent = os.getppid()
    if method != "forkserver" and parent != creator:  # the build died before this worker got here
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _pool(workers: int) -> ProcessPoolExecutor:
    """Forked workers start in milliseconds with our modules already imported; forking is only safe
    while this process has no other thread (a lock held elsewhere would stay held in the child)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        method = "fork"
    else:
        method = "forkserver" if "forkserver" in methods else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=_exit_with_parent, initargs=(os.getpid(), method))


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
    rather than a pool: a pool's management thread would make every later fork (the figure workers')
    unsafe, so the build would fall back to starting them from scratch."""

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


@dataclass
class Pending:
    """Figures on their way: those the cache had, and the jobs (and futures, with a pool) for the rest."""
    plan: tuple[FigureRef, ...]
    done: dict[str, RenderedFigure] = field(default_factory=dict)
    todo: list[FigureJob] = field(default_factory=list)
    futures: dict[Future, FigureJob] | None = None
    warm: WarmWorker | None = None  # the worker started before the analysis, when it draws them


WARM_DRAWS = 4  # at most this many figures go to the one worker started early; more are shared by a pool


def _warm_worker_main(connection, creator: int) -> None:
    _exit_with_parent(creator, "fork")
    try:
        warm_up()
    except Exception:  # draw() says what is wrong, in one line, for each figure it is sent
        pass
    try:
        jobs = connection.recv()
    except EOFError:
        return
    for job in jobs or ():
        connection.send((job.name, draw(job)))
    connection.close()


class WarmWorker:
    """One forked process that imports matplotlib at once and then draws the figures it is sent: started
    when an edit changed what the figures are drawn from, so that the import overlaps the analysis
    rather than following it. Stopped unused when the edit changed no figure (or too many for one)."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_warm_worker_main, args=(child, os.getpid()), daemon=True)
        self.process.start()
        child.close()

    def draw(self, jobs: list[FigureJob]) -> None:
        self.connection.send(jobs)

    def results(self, jobs: list[FigureJob]):
        by_name = {job.name: job for job in jobs}
        for _ in jobs:
            try:
                name, result = self.connection.recv()
            except EOFError:
                self.process.join()
                raise BuildError(f"the figure worker ended without its figures (exit status {self.process.exitcode})") from None
            yield by_name[name], result

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


class FigureStage:
    """Renders what the cache lacks, in a worker pool when more than one figure is missing."""

    def __init__(self, cache: Cache, workers: int, progress: Progress | None = None):
        self.cache, self.workers, self.progress = cache, workers, progress
        self.pool: ProcessPoolExecutor | None = None
        self.helpers: list[Helper] = []
        self.warm: WarmWorker | None = None
        self.started: list[WarmWorker] = []
        self.code = figure_code()

    def start_pool(self) -> None:
        """Start the figure workers (unless one is all we have). Forked after prepare(), they have matplotlib
        already; otherwise each imports it while it waits for its first figure."""
        if self.pool is None and self.workers > 1:
            self.pool = _pool(self.workers)
            if f"{__package__}.figures" not in sys.modules:
                for _ in range(self.workers):
                    self.pool.submit(warm_up)

    def prepare(self) -> None:
        """Import matplotlib (and the card's canvas) in this process, once, so that figure workers forked
        afterwards share it instead of each importing it."""
        warm_up()
        importlib.import_module("matplotlib.backends.backend_agg")

    def helper(self, function: Callable, *args) -> Helper | None:
        """Run function(*args) in a process of its own, started at once: work that needs no figure code (the
        playground) runs there while this process imports matplotlib and analyses. None where forking is
        not safe; the caller then does the work itself."""
        if not _can_fork():
            return None
        helper = Helper(function, args)
        self.helpers.append(helper)
        return helper

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        for helper in self.helpers:
            helper.stop()
        self.helpers = []
        self.stop_warm()
        for worker in self.started:
            worker.stop()
        self.started = []


    def key(self, ref: FigureRef) -> str:
        return digest(self.code, ref.function, ref.inputs)

    def run(self, facts: Facts, plan: tuple[FigureRef, ...], report: Report) -> dict[str, RenderedFigure]:
        return self.collect(self.submit(facts, plan, report), report)

    def submit(self, facts: Facts, plan: tuple[FigureRef, ...], report: Report) -> Pending:
        """Take what the cache has and hand the rest to the workers, which draw while this process goes on."""
        pending = Pending(plan)
        missing: list[FigureRef] = []
        for ref in plan:
            hit = self.cache.load("figures", self.key(ref))
            if hit is None:
                missing.append(ref)
            else:
                pending.done[ref.name] = RenderedFigure(*hit)
        report.reused = len(plan) - len(missing)
        report.rendered = len(missing)
        if missing:
            from .figure_registry import jobs

            wanted = {ref.name for ref in missing}
            pending.todo = [job for job in jobs(facts) if job.name in wanted]
            if self.warm is not None and len(pending.todo) <= WARM_DRAWS:
                self.warm.draw(pending.todo)
                pending.warm, self.warm = self.warm, None
                self.started.append(pending.warm)
                return pending
            self.stop_warm()
            if len(pending.todo) > 1:
                self.start_pool()
            if self.pool is not None:
                pending.futures = {self.pool.submit(draw, job): job for job in pending.todo}
        self.stop_warm()
        return pending

    def prewarm(self) -> None:
        """Start one figure worker now, to import matplotlib while this process analyses (see WarmWorker)."""
        if self.warm is None and self.workers > 1 and _can_fork():
            self.warm = WarmWorker()

    def stop_warm(self) -> None:
        if self.warm is not None:
            self.warm.stop()
            self.warm = None

    def collect(self, pending: Pending, report: Report) -> dict[str, RenderedFigure]:
        """Wait for the figures submit() handed out (or draw them here, without a pool), in plan order."""
        for done, (job, result) in enumerate(self._results(pending), start=1):
            if isinstance(result, str):
                raise BuildError(result)
            pending.done[job.name] = RenderedFigure(*result)
            self.cache.store("figures", self.key(job.ref), result)
            if self.progress:
                self.progress("figures", done, len(pending.todo))
        return {ref.name: pending.done[ref.name] for ref in pending.plan}

    def _results(self, pending: Pending):
        if pending.warm is not None:
            yield from pending.warm.results(pending.todo)
            return
        if pending.futures is None:
            yield from self._draw(pending.todo)
            return
        from concurrent.futures import as_completed

        for future in as_completed(pending.futures):
            yield pending.futures[future], future.result()

    def _draw(self, jobs: list[FigureJob]):
        if self.pool is None:
            for job in jobs:
                yield job, draw(job)
            return
        from concurrent.futures import as_completed

        futures: dict[Future, FigureJob] = {self.pool.submit(draw, j): j for j in jobs}
        for future in as_completed(futures):
            yield futures[future], future.result()
