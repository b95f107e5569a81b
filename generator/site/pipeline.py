"""The build, top to bottom: data -> facts -> playground -> figures -> pages -> a fresh folder swapped in whole.

`build` below calls one stage after another; each stage is a plain function from values to values. Four
kinds of result are slow enough to keep between builds, and each goes through the one cache (cache.py) as a
wrapper around the function that computes it: the Monte Carlo runs inside the facts, each kind of the
playground's training and measurement, each figure and the social card. Everything else is computed again on
every build: it takes less time than checking whether it could be reused. What the cache lacks of the last
three is started first, in two helper processes (helpers.py), and read when the stage needs it, so that on a
cold build the playground trains and the figures draw while this process computes the facts.

The values become files in assemble.py (the figures, numbers and data files, then the pages through
render/pages.py); the files are written to a fresh folder beside the target and swapped into place only
when every stage has succeeded (output.py), so a failed build leaves the previous one exactly as it was.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model.analysis import target_numbers
from ..model.beyond import RuleFacts
from ..model.config import ConfigError, SiteConfig, load_config
from ..model.convergence import ConvergenceCase
from ..model.facts import Facts
from ..model.profiles import Profiles, load_profiles
from ..model.readers import inside, not_a_file, outside_project, project_root
from ..playground.records import Playground, TrainedPair
from .assemble import data_files, page_variables, render_pages
from .cache import Cache, library_version
from .helpers import Helpers
from .output import target_of, write_atomically
from .publish import build_info, site_url
from .report import BuildError, Progress, Report

INPUT_FOLDERS = ("data", "site_src")
# The facts' slow parts (facts.Memo kinds) the cache keeps, and the shape each is loaded as: the Monte Carlo,
# and the rule lab's exact enumeration of every round's outcomes (model/beyond.py).
MONTE_CARLO = MappingProxyType(
    {
        "rule-lab": tuple[RuleFacts, ...],
        "convergence-authored": tuple[ConvergenceCase, ...],
        "convergence-random": tuple[ConvergenceCase, ...],
        "convergence-wrong-sampler": tuple[ConvergenceCase, ...],
        "identity-random": tuple[int, int, int],
    }
)
FIGURE = tuple[str, str, str, str, str]  # figures.draw's (name, light SVG, dark SVG, alt, caption)
PLAYGROUND_KIND = tuple[TrainedPair, str, str | None]  # (trained and measured pair, corpus, licence)
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
    practice = report.timed("load", lambda: load_practice_data(config))
    with Helpers() as helpers:  # what the cache lacks of the playground and the figures is made beside the facts
        pairs = report.timed("playground", lambda: start_playground(config, cache, helpers))
        facts, numbers = report.timed("analysis", lambda: analyse(config, profiles, cache, practice))
        drawing = report.timed("figures", lambda: start_figures(facts, cache, helpers, config.profiles_path()))
        drawing_card = report.timed("figures", lambda: start_card(config, facts, cache, helpers))
        playground = report.timed("playground", lambda: train_playground(config, profiles, cache, pairs))
        figures = report.timed("figures", lambda: draw_figures(cache, drawing, progress))
        card = report.timed("figures", lambda: social_card(cache, drawing_card))
    info = report.timed("load", lambda: build_info(site_url(config.site_url, config.source), root))
    tree = report.timed("analysis", lambda: target_numbers(profiles.target))
    quoted = Path(practice.path) if practice is not None else None  # published beside the profiles
    files = report.timed("pages", lambda: data_files(config, figures, numbers, card, playground, quoted, tree))
    variables = report.timed("pages", lambda: page_variables(config, facts, figures, playground, info, quoted))
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
                if name in names:  # a device, a FIFO or a socket would block a read or never end
                    try:
                        problem = not_a_file(os.stat(path).st_mode)
                    except OSError:  # a broken link: the reader that wants it names it
                        problem = None
                    if problem:
                        raise BuildError(f"{path}: {problem}")


def load_inputs(root: Path) -> tuple[SiteConfig, Profiles]:
    """site.yaml, read once, and the profiles it names (build_facts checks first what the pages need of them)."""
    config = load_config(root / "data" / "site.yaml")
    profiles = load_profiles(config.profiles_path())
    return config, profiles


def load_practice_data(config: SiteConfig):
    """data/practice.yaml, beside site.yaml, when the site has the page that quotes it."""
    if not config.has_page("practice"):
        return None
    from ..model.practice import load_practice

    return load_practice(Path(config.source).parent / "practice.yaml")


# --- facts -------------------------------------------------------------------------------------


def analyse(config: SiteConfig, profiles: Profiles, cache: Cache, practice=None) -> tuple[Facts, list]:
    """Every number the pages show, and the numbers table; the Monte Carlo parts through the cache."""
    from ..model.analysis import numbers_row
    from ..model.facts import build_facts

    numpy = library_version("numpy")

    def memo(kind: str, inputs: tuple, compute):
        shape = MONTE_CARLO.get(kind)
        return compute() if shape is None else cache.get_or_compute(kind, (inputs, numpy), compute, shape)

    facts = build_facts(profiles, config, memo, practice)
    numbers = [  # read off the facts: nothing is computed again
        numbers_row(
            p.id,
            p.accept_rates,
            [share for _, share in p.round_lengths],
            p.expected_tokens,
            p.speedup,
            len(p.authored_round.frames),
        )
        for p in facts.profiles
    ]
    return facts, numbers


# --- the playground ----------------------------------------------------------------------------


def later(cache: Cache, helpers: Helpers, kind: str, key: Any, function: Callable, *args) -> Callable:
    """What get_or_compute should call for this value: function(*args), started now in a helper process when the
    cache lacks the value, so that it is ready (or nearly) by the time it is asked for."""
    if cache.has(kind, key):
        return partial(function, *args)  # called here only if the entry kept turns out unusable
    return helpers.submit(function, *args).result


def start_playground(config: SiteConfig, cache: Cache, helpers: Helpers) -> dict:
    """Each kind's cache key (its corpus files' bytes and the settings) and what computes it:
    {kind: (key, compute)}. A kind the cache lacks is started in a helper process."""
    if not config.has_page("playground"):
        return {}
    from ..playground.corpus import locate
    from ..playground.ngram import KINDS

    settings, base = config.playground, Path(config.source).parent
    started = {}
    for kind in KINDS:
        c = getattr(settings, kind)
        paths = locate(c.package, c.files, base, f"playground.{kind}")
        refuse_corpus_files(config, kind, paths)
        files = [(p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths]
        key = (kind, files, settings, library_version("numpy"))
        args = (kind, settings, base, config.source)
        started[kind] = (key, later(cache, helpers, "playground", key, playground_kind, *args))
    return started


def train_playground(config: SiteConfig, profiles: Profiles, cache: Cache, started: dict) -> Playground | None:
    """Each kind's model pair trained and its rounds counted (or found in the cache), then priced under the
    profiles' cost model, which only prices the counted rounds."""
    if not started:
        return None
    from ..playground import assemble

    settings, cost = config.playground, profiles.cost_model
    pairs, corpora, licences = {}, {}, {}
    for kind, (key, compute) in started.items():
        pairs[kind], corpora[kind], licences[kind] = cache.get_or_compute("playground", key, compute, PLAYGROUND_KIND)
    steps = (cost.draft_step, cost.verify_step)
    return assemble(pairs, settings.seed, settings.max_k, *steps, settings.generate_chars, corpora, licences)


def refuse_corpus_files(config: SiteConfig, kind: str, paths: list[Path]) -> None:
    """Each file a corpus setting matched is a regular file inside the project, or among the named package's own
    installed files (a link leading elsewhere, a device or a FIFO is refused), before a byte of it is read."""
    import importlib.metadata

    c = getattr(config.playground, kind)
    where = f"{config.source}: playground.{kind}.files"
    if c.package:
        folder, owner = Path(importlib.metadata.distribution(c.package).locate_file("")), f"the package {c.package}"
    else:
        folder, owner = project_root(Path(config.source)) or Path(config.source).parent, "the project"
    for path in paths:
        if not inside(path, folder):
            raise BuildError(f"{where}: {path} lies outside {owner} ({os.path.realpath(path)}): refused")
        problem = not_a_file(os.stat(path).st_mode)
        if problem:
            raise BuildError(f"{where}: {path} {problem}")


def playground_kind(
    kind: str, settings, base: Path, settings_file: str = "data/site.yaml"
) -> tuple[TrainedPair, str, str | None]:
    """One kind's corpus, its pair trained and its rounds counted, and its package's licence."""
    from ..playground import Orders, build_kind
    from ..playground.corpus import licence_text, load_sources

    c = getattr(settings, kind)
    text, _ = load_sources(c.package, c.files, c.books, base, f"playground.{kind}")
    vocabulary = len(set(text))
    for name in ("target_order", "draft_order"):  # the models pack an n-gram into one int64: see config.MAX_ORDER
        if vocabulary ** getattr(c, name) >= 2**63:
            top = next(order for order in range(1, 64) if vocabulary ** (order + 1) >= 2**63)
            raise ConfigError(
                f"{settings_file}: playground.{kind}.{name}: {getattr(c, name)} is too long for a corpus of "
                f"{vocabulary} distinct characters (at most {top})"
            )
    pair = build_kind(
        kind,
        text,
        Orders(c.target_order, c.draft_order, c.min_count),
        settings.seed,
        settings.rounds,
        settings.max_k,
    )
    if not pair.prompts:  # the page opens on the first one
        raise ConfigError(
            f"{settings_file}: playground.{kind}.files: the held-out last tenth of this corpus offers no example "
            "prompt (prose: a line of 12 words or more; code: a line opening with return, if, for and the like)"
        )
    return pair, text, licence_text(c.package)


# --- figures and the social card -----------------------------------------------------------------


def start_figures(facts: Facts, cache: Cache, helpers: Helpers, data: Path) -> dict[str, tuple]:
    """Every figure the registry lists: {name: (job, cache key, compute)}. Each is cached by its drawing function
    and a digest of exactly what it is drawn from; one the cache lacks is started in a helper process."""
    from ..render.figure_registry import jobs

    versions = [library_version(name) for name in ("matplotlib", "numpy")]
    started = {}
    for job in jobs(facts):
        key = (job.ref.module, job.ref.function, job.ref.inputs, versions)
        started[job.name] = (job, key, later(cache, helpers, "figure", key, draw_one, job, data))
    return started


def draw_figures(cache: Cache, started: dict, progress: Progress | None = None) -> dict[str, tuple]:
    """Every figure, by name: (name, light SVG, dark SVG, alt, caption, its FigureRef)."""
    drawn = {}
    for count, (name, (job, key, compute)) in enumerate(started.items(), start=1):
        figure = cache.get_or_compute("figure", key, compute, FIGURE, check=inert_figure)
        drawn[name] = (*figure, job.ref)
        if progress:
            progress("figures", count, len(started))
    return drawn


# What matplotlib writes, and all a figure may hold: a figure read from the cache (which may be shared, or
# restored from elsewhere) that holds anything more is drawn again rather than published.
SVG_PROLOG = (
    '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"\n'
    '  "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n'
)
SVG_ELEMENTS = MappingProxyType(
    {
        "http://www.w3.org/2000/svg": {"svg", "g", "path", "use", "text", "defs", "rect", "clipPath", "pattern"}
        | {"metadata", "title", "style"},
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#": {"RDF"},
        "http://creativecommons.org/ns#": {"Work", "Agent"},
        "http://purl.org/dc/elements/1.1/": {"type", "format", "creator", "Agent", "title", "date", "description"},
    }
)
SVG_STYLE = "*{stroke-linejoin: round; stroke-linecap: butt}"  # matplotlib's one style sheet
RDF_RESOURCE = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}resource"


def inert_svg(svg: str) -> bool:
    """Whether an SVG holds only what matplotlib draws: no script, event handler, foreign reference or style
    sheet of its own, no entity (nothing before <svg> but matplotlib's own prolog)."""
    import xml.etree.ElementTree as ET

    if not svg.startswith(SVG_PROLOG) or "<!" in svg[len(SVG_PROLOG) :]:
        return False
    try:
        root = ET.fromstring(svg[len(SVG_PROLOG) :])
    except ET.ParseError:
        return False
    for element in root.iter():
        namespace, _, name = str(element.tag)[1:].partition("}")
        if name not in SVG_ELEMENTS.get(namespace, ()) or (name == "style" and element.text != SVG_STYLE):
            return False
        for attribute, value in element.attrib.items():
            local = attribute.rpartition("}")[2].lower()
            if local.startswith("on") or value.lower().replace("url(#", "").count("url(") or "javascript" in value:
                return False
            if local == "href" and not value.startswith("#"):
                return False
            if attribute == RDF_RESOURCE and not value.startswith("http://purl.org/dc/dcmitype/"):
                return False
    return True


def inert_figure(figure: tuple) -> bool:
    return inert_svg(figure[1]) and inert_svg(figure[2])


def draw_one(job, data: Path) -> tuple[str, str, str, str, str]:
    """One figure drawn; one it cannot draw legibly (texts that overlap or leave it) is the data's doing, since the
    schema's limits are set to what every figure shows: said in one line naming the data file. A drawing function
    that raises is the figure code's fault: its line names the figure's module, not the data."""
    from ..render.figures import FigureError, FigureFailed, draw

    try:
        return draw(job)
    except FigureFailed as exc:
        raise BuildError(str(exc)) from None
    except FigureError as exc:
        problem = str(exc).split(": ", 2)[-1]
        raise BuildError(f"{data}: the figure {job.name} cannot show this data legibly: {problem}") from None


def start_card(config: SiteConfig, facts: Facts, cache: Cache, helpers: Helpers) -> tuple[Any, Callable]:
    """The social card's cache key and what draws it: the 1200 x 630 PNG link previews show, each profile's
    authored round as the stepper's last frame shows it. Cached like a figure, and started like one."""
    from ..render.views import round_view

    rounds = []
    for p in facts.profiles:
        last = round_view(p.id, "authored", "", p.authored_round, facts.tokens).frames[-1]
        rounds.append((p.name, [(c.token, c.state) for c in last.chips]))
    inputs = {"title": config.title, "tagline": TAGLINE, "rounds": rounds}
    key = (inputs, [library_version(name) for name in ("pillow", "matplotlib")])  # Pillow uses matplotlib's fonts
    return key, later(cache, helpers, "card", key, draw_card, inputs)


def draw_card(inputs: dict) -> str:
    """The card's PNG as base64 text (cache entries are JSON)."""
    from ..render.card import social_card as draw

    return base64.b64encode(draw(**inputs)).decode("ascii")


def social_card(cache: Cache, started: tuple[Any, Callable]) -> bytes:
    key, compute = started
    return base64.b64decode(cache.get_or_compute("card", key, compute, str, check=is_png))


def is_png(text: str) -> bool:
    """Whether base64 `text` holds a PNG (what the card must be, wherever the cache got it)."""
    try:
        return base64.b64decode(text, validate=True).startswith(b"\x89PNG\r\n\x1a\n")
    except ValueError:
        return False
