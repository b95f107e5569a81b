"""`bench [--runs N] [--baseline CHECKOUT]`: wall times of the four builds a person waits for, against budgets.

Everything runs on a copy of the project's inputs in a temporary folder, so the project's own cache,
build/ and sources are untouched. Each run times four fresh `python -m generator build` processes
(interpreter start-up and imports count, as they do for a person at the terminal):

  cold          --clean, an empty cache
  no-change     the same inputs again
  one-page edit one sentence appended to one page's Markdown
  one-number    the profiles' draft step changed (one number of the authored data)

With --baseline, each timed build is paired with the same build of another checkout of this project (its
own generator/, data/ and site_src/) run just after it, and the median of the paired ratios is printed:
the machine's load moves both sides of a pair alike. Python's bytecode cache is used as at a terminal
(PYTHONDONTWRITEBYTECODE is removed from the timed commands' environment). The CPU seconds are the build
process's own: the two helper processes a build starts when its cache lacks figures or the playground (and the
forkserver they come from) are not its waited-for children, so their time is not in the count.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import MappingProxyType

from ..errors import UserError
from ..site.cache import ENV_DIR

PACKAGE_PARENT = Path(__file__).resolve().parents[2]
SOURCES = ("data", "site_src")
KINDS = ("cold", "no-change", "one-page edit", "one-number edit")
BUDGETS = MappingProxyType({"cold": 5.0, "no-change": 0.6, "one-page edit": 1.0, "one-number edit": 4.0})  # seconds
MODULE_LINES = 600  # the longest a module of generator/ may be


def add_arguments(p) -> None:
    p.add_argument("--runs", type=int, default=5, help="runs of each kind; medians are reported (default: %(default)s)")
    p.add_argument("--baseline", metavar="CHECKOUT", help="another checkout of this project to pair every build with")


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed_build(code: Path, project: Path, cache: Path, clean: bool) -> tuple[float, float]:
    """(wall, CPU) seconds of one build in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({ENV_DIR: str(cache), "PYTHONPATH": str(code)})
    command = [
        sys.executable,
        "-m",
        "generator",
        "build",
        "--out",
        str(project / "build"),
        *(["--clean"] if clean else []),
    ]
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        command, check=False, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        raise UserError(f"bench: the build of {project} failed: {last}")
    return elapsed, cpu


def copy_inputs(source: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    for name in SOURCES:
        shutil.copytree(source / name, dest / name)
    return dest


def site_yaml(root: Path) -> dict:
    import yaml

    return yaml.safe_load((root / "data" / "site.yaml").read_text(encoding="utf-8")) or {}


def edit_page(root: Path, run: int) -> None:
    """Append one sentence to the middle page of the reading order: text only, no number."""
    folder = root / "site_src" / "pages"
    pages = [folder / f"{p}.md" for p in site_yaml(root).get("pages") or [] if (folder / f"{p}.md").is_file()]
    if not pages:
        raise UserError("bench: data/site.yaml lists no page that site_src/pages holds")
    page = pages[len(pages) // 2]
    page.write_text(
        page.read_text(encoding="utf-8") + f"\nOne more sentence, written by run {run + 1}.\n", encoding="utf-8"
    )


def edit_number(root: Path, run: int) -> None:
    """Change the authored draft step (cost_model.draft_step) in the profiles file: one number."""
    path = root / "data" / str(site_yaml(root).get("profiles") or "profiles.v1.json")
    text = path.read_text(encoding="utf-8")
    old = json.loads(text)["cost_model"]["draft_step"]
    new = f"1/{11 + run}" if old != f"1/{11 + run}" else f"1/{12 + run}"
    needle = f'"draft_step": "{old}"'
    if needle not in text:
        raise UserError(f"bench: {path.name}: cost_model: cannot find {needle} to edit")
    path.write_text(text.replace(needle, f'"draft_step": "{new}"', 1), encoding="utf-8")


def measure(sides: list[Path], runs: int) -> list[dict[str, list[tuple[float, float]]]]:
    """Per side (a checkout: its code and inputs), per kind, the (wall, CPU) seconds of each run."""
    results: list[dict[str, list[tuple[float, float]]]] = [{kind: [] for kind in KINDS} for _ in sides]
    steps = (("cold", None), ("no-change", None), ("one-page edit", edit_page), ("one-number edit", edit_number))
    with tempfile.TemporaryDirectory(prefix="generator-bench-") as tmp:
        tmp = Path(tmp)
        for run in range(runs):
            projects = [copy_inputs(side, tmp / f"project-{i}") for i, side in enumerate(sides)]
            for kind, edit in steps:
                for i, (side, project) in enumerate(zip(sides, projects)):
                    if edit is not None:
                        edit(project, run)
                    results[i][kind].append(timed_build(side, project, tmp / f"cache-{i}", kind == "cold"))
    return results


def report(results: list[dict[str, list[tuple[float, float]]]]) -> list[str]:
    """Medians of wall time against the budgets, and of CPU time (what a busy machine does not inflate)."""
    ours = results[0]
    lines = []
    for kind in KINDS:
        walls = [wall for wall, _ in ours[kind]]
        median, cpu = statistics.median(walls), statistics.median(c for _, c in ours[kind])
        verdict = "ok" if median <= BUDGETS[kind] else "OVER"
        line = f"{kind:16} median {median:5.2f}s  budget {BUDGETS[kind]:.1f}s {verdict:4}  CPU {cpu:5.2f}s"
        if len(results) > 1:
            base = results[1][kind]
            ratio = statistics.median(a / b for (a, _), (b, _) in zip(ours[kind], base))
            line += (
                f"  baseline {statistics.median(b for b, _ in base):5.2f}s (CPU "
                f"{statistics.median(c for _, c in base):5.2f}s)  paired ratio {ratio:5.2f}x"
            )
        lines.append(f"{line}  runs: {', '.join(f'{t:.2f}' for t in walls)}")
    sizes = {
        p.relative_to(PACKAGE_PARENT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in (PACKAGE_PARENT / "generator").rglob("*.py")
    }
    longest = max(sizes, key=lambda name: (sizes[name], name))
    verdict = "ok" if sizes[longest] <= MODULE_LINES else "OVER"
    lines.append(f"longest module: {longest}, {sizes[longest]} lines (limit {MODULE_LINES}) {verdict}")
    return lines


def run(args) -> int:
    if args.runs < 1:
        raise UserError("bench: --runs must be at least 1")
    sides = [Path.cwd()]
    if args.baseline:
        baseline = Path(args.baseline).resolve()
        if not (baseline / "generator" / "__main__.py").is_file():
            raise UserError(f"bench: --baseline {baseline}: not a checkout of this project (no generator/__main__.py)")
        sides.append(baseline)
    print("\n".join(report(measure(sides, args.runs))))
    return 0
