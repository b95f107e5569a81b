"""The build pipeline: data -> context -> figures and pages -> a fresh folder swapped in whole.

Every stage reads only what the previous one produced. The output is written to a temporary
folder beside the target and renamed into place only when every stage has succeeded, so a
failed build leaves the previously published folder exactly as it was.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import analysis, figures as fig
from .config import SiteConfig, load_config
from .context import Context, build_context, stepper_data
from .errors import UserError
from .pages import environment, json_for_script, load_pages, markdown_renderer, render_layout, render_page
from .profiles import load_profiles


class BuildError(UserError):
    pass


@dataclass
class Report:
    pages: int = 0
    figures: int = 0
    stages: dict[str, float] = field(default_factory=dict)

    def timed(self, stage: str, work: Callable):
        start = time.perf_counter()
        result = work()
        self.stages[stage] = self.stages.get(stage, 0.0) + time.perf_counter() - start
        return result

    def summary(self) -> str:
        stages = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.stages.items())
        return f"{self.pages} pages, {self.figures} figures ({stages})"


def figure_jobs(ctx: Context) -> list[tuple[Callable, dict]]:
    """Which figures the site shows and the numbers each is drawn from."""
    tokens, k = ctx.tokens, ctx.k
    labels = [f"position {i}" for i in range(1, k + 1)] + ["bonus"]
    jobs: list[tuple[Callable, dict]] = []
    for p in ctx.profiles:
        jobs.append((fig.profile_bars, dict(
            name=f"profile-{p.id}", tokens=tokens, target_rows=[v.target for v in p.positions],
            draft_rows=[v.draft for v in p.positions if not v.is_bonus],
            proposals=list(p.authored.proposals), title=p.name,
        )))
        checks = p.convergence.checks
        jobs.append((fig.convergence_histograms, dict(
            name=f"convergence-{p.id}", tokens=tokens, position_labels=labels,
            target_rows=[v.target for v in p.positions], frequencies=[c.frequencies for c in checks],
            samples=[c.samples for c in checks], title=f"{p.name}: committed tokens against the target",
        )))
    jobs.append((fig.error_vs_samples, dict(
        name="error-vs-samples",
        series=[(f"{p.name}, {labels[c.position - 1]}", list(c.error_curve))
                for p in ctx.profiles for c in p.convergence.checks],
        title="Distance to the target as rounds accumulate",
    )))
    jobs.append((fig.error_vs_samples, dict(
        name="error-vs-samples-random",
        series=[(case.id.replace("-", " "), list(max(case.checks, key=lambda c: c.total_variation).error_curve))
                for case in ctx.convergence["random"]],
        title="Random profiles: the slowest position of each",
    )))
    jobs.append((fig.round_length_distribution, dict(
        name="round-lengths", series=[(p.name, [prob for _, prob in p.round_lengths]) for p in ctx.profiles], k=k,
    )))
    jobs.append((fig.acceptance_bars, dict(
        name="acceptance", labels=labels[:k], rates=[(p.name, list(p.accept_rates)) for p in ctx.profiles],
    )))
    for cost in sorted({c.cost for c in ctx.speedup_curves}):
        curves = [c for c in ctx.speedup_curves if c.cost == cost]
        jobs.append((fig.speedup_vs_k, dict(
            name=f"speedup-vs-k-{cost.numerator}-{cost.denominator}",
            curves=[(f"α = {float(c.alpha):g}", list(c.points)) for c in curves],
            best=[(f"α = {float(c.alpha):g}", c.best_k, c.best_speedup) for c in curves],
        )))
    r = ctx.roofline
    jobs.append((fig.roofline, dict(
        name="roofline", positions=list(r.positions), times_ms=list(r.times_ms), memory_ms=r.memory_ms,
        compute_ms=[r.compute_ms_per_position * n for n in r.positions], model_label=r.model_label,
    )))
    return jobs


def render_figures(ctx: Context) -> dict[str, fig.Figure]:
    out = {}
    for func, kwargs in figure_jobs(ctx):
        try:
            figure = func(**kwargs)
        except Exception as exc:  # a figure that raises must fail the build with its name, not a traceback
            raise BuildError(f"generator/figures.py: {func.__name__}({kwargs['name']!r}) failed: "
                             f"{type(exc).__name__}: {exc}") from None
        out[figure.name] = figure
    return out


def load_inputs(root: Path, config_path: Path | None = None) -> tuple[SiteConfig, object]:
    config = load_config(config_path or root / "data" / "site.yaml")
    profiles = load_profiles(Path(config.source).parent / config.profiles)
    return config, profiles


def render_site(root: Path, ctx: Context) -> dict[str, bytes]:
    """Every output file as bytes, keyed by its path inside the build folder."""
    site_src = root / "site_src"
    env = environment(site_src / "templates")
    md = markdown_renderer()
    pages = load_pages(site_src / "pages", ctx.config.pages, ctx.config.source)
    ctx.pages = pages
    variables = ctx.template_vars()
    variables["stepper_json"] = json_for_script(stepper_data(ctx))
    for page in pages:
        render_page(page, env, md, variables)
    files: dict[str, bytes] = {}
    for page in pages:
        files[page.url] = render_layout(page, pages, env, variables).encode("utf-8")
    for name, figure in ctx.figures.items():
        files[f"figures/{name}.svg"] = figure.svg.encode("utf-8")
    files["figures/manifest.json"] = manifest(ctx).encode("utf-8")
    assets = site_src / "assets"
    for path in sorted(assets.rglob("*")) if assets.exists() else []:
        if path.is_file():
            files[f"assets/{path.relative_to(assets).as_posix()}"] = path.read_bytes()
    return files


def manifest(ctx: Context) -> str:
    entries = {
        name: {"file": f"{name}.svg", "caption": f.caption, "alt": f.alt,
               "sha256": hashlib.sha256(f.svg.encode("utf-8")).hexdigest()}
        for name, f in sorted(ctx.figures.items())
    }
    return json.dumps({"figures": entries}, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def write_atomically(files: dict[str, bytes], out: Path) -> None:
    """Write into a sibling temporary folder, then swap it for `out` in two renames."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    try:
        for rel, data in sorted(files.items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        os.chmod(staging, 0o755)
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=out.parent))
            os.rmdir(old)
            out.rename(old)
        staging.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def build(root: Path, out: Path, report: Report | None = None) -> Report:
    report = report or Report()
    config, profiles = report.timed("load", lambda: load_inputs(root))
    ctx = report.timed("analysis", lambda: build_context(profiles, config))
    ctx.figures = report.timed("figures", lambda: render_figures(ctx))
    files = report.timed("pages", lambda: render_site(root, ctx))
    table = analysis.numbers_table(profiles, config.seeds.authored_round)
    files["numbers.json"] = (json.dumps({"profiles": table}, indent=2) + "\n").encode("utf-8")
    report.timed("write", lambda: write_atomically(files, out))
    report.pages = len(ctx.pages)
    report.figures = len(ctx.figures)
    return report
