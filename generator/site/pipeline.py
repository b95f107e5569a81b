"""The build, top to bottom: data -> facts -> playground -> figures -> pages -> a fresh folder swapped in whole.

`build` below calls one stage after another; each stage is a plain function from values to values. Three
kinds of result are slow enough to keep between builds, and each goes through the one cache (cache.py) as a
wrapper around the function that computes it: the Monte Carlo runs inside the facts, each kind of the
playground's training and measurement, and each figure. Everything else is computed again on every build:
it takes less time than checking whether it could be reused.

The values become files in assemble.py (the figures, numbers and data files, then the pages through
render/pages.py); the files are written to a fresh folder beside the target and swapped into place only
when every stage has succeeded (output.py), so a failed build leaves the previous one exactly as it was.
"""

from __future__ import annotations

import base64
import hashlib
import os
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model.analysis import target_numbers
from ..model.config import SiteConfig, load_config
from ..model.convergence import ConvergenceCase
from ..model.facts import Facts
from ..model.profiles import Profiles, load_profiles
from ..model.readers import outside_project
from .assemble import data_files, page_variables, render_pages
from .cache import Cache, library_version
from .output import target_of, write_atomically
from .publish import build_info, site_url
from .report import BuildError, Progress, Report

INPUT_FOLDERS = ("data", "site_src")
# The facts' Monte Carlo parts (facts.Memo kinds) the cache keeps, and the shape each is loaded as.
MONTE_CARLO = MappingProxyType(
    {
        "convergence-authored": tuple[ConvergenceCase, ...],
        "convergence-random": tuple[ConvergenceCase, ...],
        "convergence-wrong-sampler": tuple[ConvergenceCase, ...],
        "identity-random": tuple[int, int, int],
    }
)
FIGURE = tuple[str, str, str, str, str]  # figures.draw's (name, light SVG, dark SVG, alt, caption)
PLAYGROUND_KIND = tuple[dict[str, Any], str, str | None]  # (trained and measured pair, corpus, licence)
TAGLINE = "A small draft proposes, the target checks, and the output keeps the target's distribution."


def build(
    root: Path, out: Path, *, clean: bool = False, cache: Cache | None = None, progress: Progress | None = None
) -> Report:
    """Build the site whose data/ and site_src/ are in `root` into `out`."""
    root = Path(root).resolve()
    target = target_of(out)  # a link `out` we could not follow is refused before any work
    cache = cache if cache is not None else Cache.for_root(root)
    if clean:
        cache.clear()
    report = Report(cache=cache)
    report.timed("load", lambda: refuse_links_out(root))
    config, profiles = report.timed("load", lambda: load_inputs(root))
    facts, numbers = report.timed("analysis", lambda: analyse(config, profiles, cache))
    playground = report.timed("playground", lambda: train_playground(config, profiles, cache))
    figures = report.timed("figures", lambda: draw_figures(facts, cache, progress))
    card = report.timed("figures", lambda: social_card(config, facts, cache))
    info = report.timed("load", lambda: build_info(site_url(config.site_url, config.source), root))
    tree = report.timed("analysis", lambda: target_numbers(profiles.target))
    files = report.timed("pages", lambda: data_files(config, figures, numbers, card, playground, tree))
    variables = report.timed("pages", lambda: page_variables(config, facts, figures, playground, info))
    pages = report.timed("pages", lambda: render_pages(root, config, info, variables, files))
    report.pages, report.figures = pages, len(figures)
    report.timed("write", lambda: write_atomically(files, target))
    cache.prune()
    return report


# --- inputs ------------------------------------------------------------------------------------


def refuse_links_out(root: Path) -> None:
    """Every file the build reads under data/ and site_src/ is read through its links, as it is now; a link
    that leads out of the project is refused in one line (a page or an asset could otherwise publish any
    file of the machine): readers.outside_project, the rule every reader applies, checked up front."""
    seen: set[str] = set()
    for folder in INPUT_FOLDERS:
        for here, dirs, names in os.walk(root / folder, followlinks=True):
            real = os.path.realpath(here)
            if real in seen:  # a link back up the tree: walked already
                dirs[:] = []
                continue
            seen.add(real)
            for name in (*dirs, *names):
                path = Path(here, name)
                problem = outside_project(path) if path.is_symlink() else None
                if problem:
                    raise BuildError(problem)


def load_inputs(root: Path) -> tuple[SiteConfig, Profiles]:
    """site.yaml, read once, and the profiles it names, with the checks `validate` runs on what the pages need."""
    from ..model.requirements import check_profiles

    config = load_config(root / "data" / "site.yaml")
    profiles = load_profiles(config.profiles_path())
    check_profiles(profiles, config.seeds.authored_round)
    return config, profiles


# --- facts -------------------------------------------------------------------------------------


def analyse(config: SiteConfig, profiles: Profiles, cache: Cache) -> tuple[Facts, list]:
    """Every number the pages show, and the numbers table; the Monte Carlo parts through the cache."""
    from ..model.analysis import numbers_table
    from ..model.facts import build_facts

    numpy = library_version("numpy")

    def memo(kind: str, inputs: tuple, compute):
        shape = MONTE_CARLO.get(kind)
        return compute() if shape is None else cache.get_or_compute(kind, (inputs, numpy), compute, shape)

    facts = build_facts(profiles, config, memo)
    rounds = [p.authored_round for p in facts.profiles]
    return facts, numbers_table(profiles, config.seeds.authored_round, rounds)


# --- the playground ----------------------------------------------------------------------------


def train_playground(config: SiteConfig, profiles: Profiles, cache: Cache) -> dict | None:
    """Each kind's corpus read, its model pair trained and measured (cached by the corpus files' bytes and
    the settings), then priced under the profiles' cost model, which only prices the measured rounds."""
    if "playground" not in (*config.pages, *config.beyond, *config.appendix):
        return None
    from ..playground import assemble, repriced
    from ..playground.corpus import locate
    from ..playground.ngram import KINDS

    settings, base, cost = config.playground, Path(config.source).parent, profiles.cost_model
    pairs, corpora, licences = {}, {}, {}
    for kind in KINDS:
        c = getattr(settings, kind)
        files = [
            (p.name, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in locate(c.package, c.files, base, f"playground.{kind}")
        ]
        key = (kind, files, settings, library_version("numpy"))
        compute = partial(playground_kind, kind, settings, base, cost.draft_step, cost.verify_step)
        pairs[kind], corpora[kind], licences[kind] = cache.get_or_compute("playground", key, compute, PLAYGROUND_KIND)
    data = assemble(pairs, settings.seed, settings.max_k, cost.draft_step, cost.verify_step)
    data.update(generate_chars=settings.generate_chars, corpora=corpora, licences=licences)
    return repriced(data, cost.draft_step, cost.verify_step)


def playground_kind(kind: str, settings, base: Path, draft_step, verify_step) -> tuple[dict, str, str | None]:
    """One kind's corpus, its pair trained and measured (without the export itself: the site publishes
    it as models_json), and its package's licence."""
    from ..playground import Orders, build_kind
    from ..playground.corpus import licence_text, load_sources

    c = getattr(settings, kind)
    text, _ = load_sources(c.package, c.files, c.books, base, f"playground.{kind}")
    pair = build_kind(
        kind,
        text,
        Orders(c.target_order, c.draft_order, c.min_count),
        settings.seed,
        settings.rounds,
        draft_step,
        verify_step,
        settings.max_k,
    )
    return {name: value for name, value in pair.items() if name != "models"}, text, licence_text(c.package)


# --- figures and the social card -----------------------------------------------------------------


def draw_figures(facts: Facts, cache: Cache, progress: Progress | None = None) -> dict[str, tuple]:
    """Every figure the registry lists, by name: (name, light SVG, dark SVG, alt, caption, its FigureRef).
    Each is cached by its drawing function and a digest of exactly what it is drawn from."""
    from ..render.figure_registry import jobs

    versions = [library_version(name) for name in ("matplotlib", "numpy")]
    plan = jobs(facts)
    keys = {job.name: (job.ref.function, job.ref.inputs, versions) for job in plan}
    missing = [job for job in plan if not cache.has("figure", keys[job.name], FIGURE)]
    fresh = dict(zip((job.name for job in missing), draw_all(missing)))
    drawn = {}
    for count, job in enumerate(plan, start=1):
        figure = cache.get_or_compute("figure", keys[job.name], lambda job=job: fresh[job.name], FIGURE)
        drawn[job.name] = (*figure, job.ref)
        if progress:
            progress("figures", count, len(plan))
    return drawn


def draw_all(jobs: list) -> list[tuple[str, str, str, str, str]]:
    """Each job drawn, in order. Drawing is the one slow step of a cold build (about 2 CPU seconds with
    matplotlib's import), so more than one figure to draw is shared between two processes."""
    if len(jobs) < 2 or (os.cpu_count() or 1) < 2:
        return [draw_one(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=2) as pool:
        return list(pool.map(draw_one, jobs))


def draw_one(job) -> tuple[str, str, str, str, str]:
    from ..render.figures import FigureError, draw

    try:
        return draw(job)
    except FigureError as exc:
        raise BuildError(str(exc)) from None


def social_card(config: SiteConfig, facts: Facts, cache: Cache) -> bytes:
    """The 1200 x 630 PNG link previews show: each profile's authored round as the stepper's last frame shows it.
    A figure like the others, so cached like them (as base64 text: entries are JSON)."""
    from ..render.views import round_view

    rounds = []
    for p in facts.profiles:
        last = round_view(p.id, "authored", "", p.authored_round, facts.tokens).frames[-1]
        rounds.append((p.name, [(c.token, c.state) for c in last.chips]))
    inputs = {"title": config.title, "tagline": TAGLINE, "rounds": rounds}

    def draw() -> str:
        from ..render.card import social_card as draw_card

        return base64.b64encode(draw_card(**inputs)).decode("ascii")

    versions = [library_version(name) for name in ("pillow", "matplotlib")]  # Pillow draws in matplotlib's fonts
    return base64.b64decode(cache.get_or_compute("card", (inputs, versions), draw, str))
