"""`bench [--runs N] [--peer auto|mkdocs|none]`: build times, as ratios to mkdocs building the same pages.

Everything runs on a copy of the project's inputs in a temporary folder, so the project's own
cache, build/ and sources are untouched. Each run times four fresh `python -m generator build`
processes (interpreter start-up and imports count, as they do for a person at the terminal):

  cold          an empty cache
  no-change     the same inputs again
  one-page edit one sentence appended to one page's Markdown
  one-number    the profiles' draft step changed (one number of the authored data)

Both sides run with Python's bytecode cache as a person's terminal has it: PYTHONDONTWRITEBYTECODE is
removed from the timed commands' environment. mkdocs and every library come with compiled bytecode
from their installation; with the variable set, only our package would be compiled again at every
run, a cost no user pays (Python writes generator/__pycache__ on the first run, as usual).

When mkdocs is installed (`pip install -e ".[bench]"`), each of our builds is paired with a
`mkdocs build` of the same Markdown pages run just before it, and the median of the paired ratios
is printed: the machine's load moves both sides of a pair alike, so ratios travel between
machines where seconds do not. Targets on this project's two-core machine are in TARGETS.
"""
from __future__ import annotations

import importlib.util
import os
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
# measure -> (what it is divided by, the largest ratio we accept)
TARGETS = MappingProxyType({
    "cold": ("mkdocs", 4.0),
    "no-change": ("mkdocs", 0.3),
    "one-page edit": ("mkdocs", 1.0),
    "one-number edit": ("cold", 0.3),
})


def add_arguments(p) -> None:
    p.add_argument("--runs", type=int, default=5, help="paired runs of each kind; medians are reported (default: %(default)s)")
    p.add_argument("--peer", choices=("auto", "mkdocs", "none"), default="auto",
                   help="compare with mkdocs: when installed (auto, the default), always, or never")


def _terminal_env() -> dict:
    """The environment a person's terminal gives Python: bytecode cached (see the module's docstring)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _env(cache: Path) -> dict:
    path = os.pathsep.join(p for p in (str(PACKAGE_PARENT), os.environ.get("PYTHONPATH", "")) if p)
    return {**_terminal_env(), ENV_DIR: str(cache), "PYTHONPATH": path}


def _timed(command: list[str], cwd: Path, env: dict, what: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, check=False, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        raise UserError(f"bench: {what} failed: {last}")
    return elapsed


def timed_build(root: Path, out: Path, cache: Path) -> float:
    return _timed([sys.executable, "-m", "generator", "build", "--out", str(out)], root, _env(cache), "the build")


def copy_inputs(source: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in SOURCES:
        shutil.copytree(source / name, dest / name)
    return dest


def page_order(root: Path) -> list[str]:
    import yaml

    config = yaml.safe_load((root / "data" / "site.yaml").read_text(encoding="utf-8")) or {}
    pages = [str(p) for p in config.get("pages") or []]
    found = [p for p in pages if (root / "site_src" / "pages" / f"{p}.md").is_file()]
    if not found:
        raise UserError("bench: data/site.yaml lists no page that site_src/pages holds")
    return found


def edit_page(root: Path, run: int) -> None:
    """Append one sentence to the middle page of the reading order: text only, no number."""
    pages = page_order(root)
    page = root / "site_src" / "pages" / f"{pages[len(pages) // 2]}.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\nOne more sentence, written by run {run + 1}.\n", encoding="utf-8")


def edit_number(root: Path, run: int) -> None:
    """Change the authored draft step (cost_model.draft_step) in the profiles file: one number."""
    import json

    import yaml

    config = yaml.safe_load((root / "data" / "site.yaml").read_text(encoding="utf-8")) or {}
    path = root / "data" / str(config.get("profiles") or "profiles.v1.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    old = raw["cost_model"]["draft_step"]
    new = f"1/{11 + run}" if old != f"1/{11 + run}" else f"1/{12 + run}"
    text = path.read_text(encoding="utf-8")
    needle = f'"draft_step": "{old}"'
    if needle not in text:
        raise UserError(f"bench: {path.name}: cost_model: cannot find {needle} to edit")
    path.write_text(text.replace(needle, f'"draft_step": "{new}"', 1), encoding="utf-8")


def mkdocs_available() -> bool:
    return importlib.util.find_spec("mkdocs") is not None


def mkdocs_project(root: Path, dest: Path) -> Path:
    """The same Markdown pages, in the same order, as a plain mkdocs site with its default theme."""
    if dest.exists():
        shutil.rmtree(dest)
    docs = dest / "docs"
    docs.mkdir(parents=True)
    pages = page_order(root)
    for i, name in enumerate(pages):
        target = "index.md" if i == 0 else f"{name}.md"
        shutil.copyfile(root / "site_src" / "pages" / f"{name}.md", docs / target)
    nav = "\n".join(f"  - {'index' if i == 0 else name}.md" for i, name in enumerate(pages))
    (dest / "mkdocs.yml").write_text(f"site_name: bench\nuse_directory_urls: false\nnav:\n{nav}\n", encoding="utf-8")
    return dest


def timed_mkdocs(project: Path) -> float:
    env = {k: v for k, v in _terminal_env().items() if k != "PYTHONPATH"}
    return _timed([sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", "site"], project, env, "mkdocs build")


def measure(root: Path, runs: int, peer: bool) -> dict[str, list[tuple[float, float | None]]]:
    """Per kind, (our seconds, the paired mkdocs seconds or None) for each run."""
    results: dict[str, list[tuple[float, float | None]]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="generator-bench-") as tmp:
        tmp = Path(tmp)
        docs = mkdocs_project(root, tmp / "mkdocs") if peer else None
        for run in range(runs):
            project = copy_inputs(root, tmp / "project")
            cache, out = tmp / f"cache-{run}", tmp / "build"
            steps = (("cold", None), ("no-change", None), ("one-page edit", edit_page), ("one-number edit", edit_number))
            for kind, edit in steps:
                if edit is not None:
                    edit(project, run)
                reference = timed_mkdocs(docs) if docs is not None else None
                results[kind].append((timed_build(project, out, cache), reference))
            shutil.rmtree(cache, ignore_errors=True)
    return results


def report(results: dict[str, list[tuple[float, float | None]]]) -> list[str]:
    lines = []
    cold = [ours for ours, _ in results["cold"]]
    for kind in KINDS:
        pairs = results[kind]
        ours = statistics.median(t for t, _ in pairs)
        runs = ", ".join(f"{t:.2f}" for t, _ in pairs)
        line = f"{kind:16} median {ours:6.2f}s"
        if all(m is not None for _, m in pairs):
            ratio = statistics.median(t / m for t, m in pairs)
            line += f"  {ratio:5.2f}x mkdocs (paired; mkdocs median {statistics.median(m for _, m in pairs):.2f}s)"
        if kind != "cold":
            line += f"  {statistics.median(t / c for (t, _), c in zip(pairs, cold)):5.2f}x cold"
        lines.append(f"{line}; runs: {runs}")
    lines.append("targets: " + "; ".join(f"{kind} <= {limit:g}x {base}" for kind, (base, limit) in TARGETS.items()))
    return lines


def run(args) -> int:
    if args.runs < 1:
        raise UserError("bench: --runs must be at least 1")
    if args.peer == "mkdocs" and not mkdocs_available():
        raise UserError('bench: --peer mkdocs: mkdocs is not installed (pip install -e ".[bench]")')
    peer = args.peer == "mkdocs" or (args.peer == "auto" and mkdocs_available())
    results = measure(Path.cwd(), args.runs, peer)
    for line in report(results):
        print(line)
    if not peer:
        print('mkdocs is not installed: no comparison (pip install -e ".[bench]")')
    return 0
