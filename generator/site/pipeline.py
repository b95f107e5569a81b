"""The build, top to bottom: data -> facts -> playground -> figures -> pages -> a fresh folder swapped in whole.

`build` below calls one stage after another; each stage is a plain function from values to values. Three
kinds of result are slow enough to keep between builds, and each goes through the one cache (cache.py) as a
wrapper around the function that computes it: the Monte Carlo runs inside the facts, each kind of the
playground's training and measurement, and each figure. Everything else is computed again on every build:
it takes less time than checking whether it could be reused.

The output is written to a fresh folder beside the target and swapped into place only when every stage
has succeeded (output.py), so a failed build leaves the previous one exactly as it was.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model.config import SiteConfig, load_config
from ..model.convergence import ConvergenceCase
from ..model.facts import Facts, FigureRef
from ..model.profiles import Profiles, load_profiles
from .cache import PACKAGE, Cache, library_version
from .output import target_of, write_atomically
from .report import BuildError, Progress, Report

INPUT_FOLDERS = ("data", "site_src")
# The facts' Monte Carlo parts (facts.Memo kinds) the cache keeps, and the shape each is loaded as.
MONTE_CARLO = MappingProxyType({
    "convergence-authored": tuple[ConvergenceCase, ...],
    "convergence-random": tuple[ConvergenceCase, ...],
    "convergence-wrong-sampler": tuple[ConvergenceCase, ...],
    "identity-random": tuple[int, int, int],
})
FIGURE = tuple[str, str, str, str, str]  # figures.draw's (name, light SVG, dark SVG, alt, caption)
PLAYGROUND_KIND = tuple[dict[str, Any], str, str | None]  # (trained and measured pair, corpus, licence)
TAGLINE = "A small draft proposes, the target checks, and the output keeps the target's distribution."


def build(root: Path, out: Path, *, clean: bool = False, cache: Cache | None = None,
          progress: Progress | None = None) -> Report:
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
    info = report.timed("load", lambda: build_info_of(root, config))
    files = report.timed("pages", lambda: data_files(config, facts, figures, numbers, card, playground))
    variables = report.timed("pages", lambda: page_variables(config, facts, figures, playground, info))
    pages = report.timed("pages", lambda: render_pages(root, config, info, variables, files))
    report.pages, report.figures = pages, len(figures)
    report.timed("write", lambda: write_atomically(files, target))
    cache.prune()
    return report


# --- inputs ------------------------------------------------------------------------------------


def refuse_links_out(root: Path) -> None:
    """Every file the build reads under data/ and site_src/ is read through its links, so it is hashed and
    published as it is now; a link that leads out of the project is refused in one line (a page or an
    asset could otherwise publish any file of the machine)."""
    inside = os.path.join(os.path.realpath(root), "")
    seen: set[str] = set()
    for folder in INPUT_FOLDERS:
        for here, dirs, names in os.walk(root / folder, followlinks=True):
            real = os.path.realpath(here)
            if real in seen:  # a link back up the tree: walked already
                dirs[:] = []
                continue
            seen.add(real)
            for name in (*dirs, *names):
                path = os.path.join(here, name)
                if os.path.islink(path) and not os.path.join(os.path.realpath(path), "").startswith(inside):
                    shown = os.path.relpath(path, root)
                    raise BuildError(f"{shown}: a link to {os.path.realpath(path)}, outside the project; "
                                     "copy the file into the project instead")


def load_inputs(root: Path) -> tuple[SiteConfig, Profiles]:
    """site.yaml, read once, and the profiles it names, with the checks `validate` runs on what the pages need."""
    from ..model.requirements import check_profiles

    config = load_config(root / "data" / "site.yaml")
    profiles = load_profiles(config.profiles_path())
    check_profiles(profiles, config.seeds.authored_round)
    return config, profiles


def build_info_of(root: Path, config: SiteConfig):
    from .publish import build_info, build_stamp, site_url

    return build_info(site_url(config.site_url, config.source), build_stamp(root))


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
    if "playground" not in (*config.pages, *config.appendix):
        return None
    from ..playground import assemble, repriced
    from ..playground.corpus import locate
    from ..playground.ngram import KINDS

    settings, base, cost = config.playground, Path(config.source).parent, profiles.cost_model
    parts = []
    for kind in KINDS:
        c = getattr(settings, kind)
        files = [(p.name, hashlib.sha256(p.read_bytes()).hexdigest())
                 for p in locate(c.package, c.files, base, f"playground.{kind}")]
        key = (kind, files, settings, library_version("numpy"))
        parts.append(cache.get_or_compute("playground", key, lambda kind=kind: playground_kind(
            kind, settings, base, cost.draft_step, cost.verify_step), PLAYGROUND_KIND))
    data = assemble({kind: pair for kind, (pair, _, _) in zip(KINDS, parts)}, settings.seed, settings.max_k,
                    cost.draft_step, cost.verify_step)
    data["generate_chars"] = settings.generate_chars
    data["corpora"] = {kind: text for kind, (_, text, _) in zip(KINDS, parts)}
    data["licences"] = {kind: licence for kind, (_, _, licence) in zip(KINDS, parts)}
    return repriced(data, cost.draft_step, cost.verify_step)


def playground_kind(kind: str, settings, base: Path, draft_step, verify_step) -> tuple[dict, str, str | None]:
    """One kind's corpus, its pair trained and measured (without the export itself: the site publishes
    it as models_json), and its package's licence."""
    from ..playground import Orders, build_kind
    from ..playground.corpus import licence_text, load_sources

    c = getattr(settings, kind)
    text, _ = load_sources(c.package, c.files, c.books, base, f"playground.{kind}")
    pair = build_kind(kind, text, Orders(c.target_order, c.draft_order, c.min_count), settings.seed,
                      settings.rounds, draft_step, verify_step, settings.max_k)
    return {name: value for name, value in pair.items() if name != "models"}, text, licence_text(c.package)


# --- figures and the social card -----------------------------------------------------------------


def draw_figures(facts: Facts, cache: Cache, progress: Progress | None = None) -> dict[str, tuple]:
    """Every figure the registry lists, by name: (name, light SVG, dark SVG, alt, caption, its FigureRef).
    Each is cached by its drawing function and a digest of exactly what it is drawn from."""
    from ..render.figure_registry import jobs

    versions = [library_version(name) for name in ("matplotlib", "numpy")]
    plan = jobs(facts)
    drawn = {}
    for count, job in enumerate(plan, start=1):
        figure = cache.get_or_compute("figure", (job.ref.function, job.ref.inputs, versions),
                                      lambda job=job: draw_one(job), FIGURE)
        drawn[job.name] = (*figure, job.ref)
        if progress:
            progress("figures", count, len(plan))
    return drawn


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


# --- pages and files ---------------------------------------------------------------------------


def figure_code() -> str:
    """The drawing code's identity in the manifest, so a review tells a data change from a code change."""
    h = hashlib.sha256()
    for name in ("figures.py", "palette.py"):
        h.update((PACKAGE / "render" / name).read_bytes())
    return h.hexdigest()


def manifest(figures: dict[str, tuple]) -> bytes:
    """What a reviewer compares between two builds (`compare`)."""
    code = figure_code()
    entries = {
        name: {"file": f"{name}.svg", "caption": caption, "alt": alt,
               "sha256": hashlib.sha256(svg.encode("utf-8")).hexdigest(),
               "dark": {"file": f"{name}.dark.svg", "sha256": hashlib.sha256(dark.encode("utf-8")).hexdigest()},
               "inputs": {"function": ref.function, "inputs_sha256": ref.inputs, "code_sha256": code}}
        for name, (_, svg, dark, alt, caption, ref) in sorted(figures.items())
    }
    return (json.dumps({"figures": entries}, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def data_files(config: SiteConfig, facts: Facts, figures: dict[str, tuple], numbers: list, card: bytes,
               playground: dict | None) -> dict[str, bytes]:
    """The output files no page or template makes: figures, the manifest, the numbers, the data, the card and
    the playground's models and corpora."""
    from .publish import CARD_FILE, numbers_csv

    files: dict[str, bytes] = {}
    for name, (_, svg, dark, _, _, _) in figures.items():
        files[f"figures/{name}.svg"] = svg.encode("utf-8")
        files[f"figures/{name}.dark.svg"] = dark.encode("utf-8")
    files["figures/manifest.json"] = manifest(figures)
    summary: dict[str, Any] = {"profiles": numbers}
    if playground is not None:
        from ..playground import corpus_script, models_script
        from ..playground import numbers as playground_numbers

        summary["playground"] = playground_numbers(playground)
        for kind, text in playground["corpora"].items():
            files[f"assets/playground-models-{kind}.js"] = models_script(playground, kind).encode("utf-8")
            files[f"assets/corpus/{kind}.txt"] = text.encode("utf-8")
            files[f"assets/corpus/{kind}.js"] = corpus_script(text, kind).encode("utf-8")
            if playground["licences"].get(kind):
                files[f"assets/corpus/{kind}-LICENSE.txt"] = playground["licences"][kind].encode("utf-8")
    files["numbers.json"] = (json.dumps(summary, indent=2) + "\n").encode("utf-8")
    files["numbers.csv"] = numbers_csv(numbers)
    files[f"data/{config.profiles_path().name}"] = config.profiles_path().read_bytes()
    files[CARD_FILE] = card
    return files


@dataclass(frozen=True)
class RenderedFigure:
    """What templates read of a figure (`figures[name].svg` and the like)."""
    name: str
    svg: str
    alt: str
    caption: str


def csp_sha256(text: str) -> str:
    """The CSP source that allows exactly one inline script or style: the 404 page has no other way to run code."""
    return "sha256-" + base64.b64encode(hashlib.sha256(str(text).encode("utf-8")).digest()).decode("ascii")


def page_variables(config: SiteConfig, facts: Facts, figures: dict[str, tuple], playground: dict | None,
                   info) -> dict:
    """What every page, widget and the 404 page are rendered with."""
    from ..render.views import site_view, stepper_data, stepper_profiles
    from ..render.whatif import editor_data
    from .publish import CARD_FILE, CARD_SIZE, bibtex, json_for_script

    plan: tuple[FigureRef, ...] = tuple(ref for (*_, ref) in figures.values())
    site = site_view(facts, config.title, plan)
    what_if = editor_data(facts)
    variables = {
        "site": site, "tokens": facts.tokens, "k": facts.k, "config": config,
        "figures": {name: RenderedFigure(name, svg, alt, caption) for name, (_, svg, _, alt, caption, _) in figures.items()},
        "stepper_json": json_for_script(stepper_data(site)), "stepper_profiles": stepper_profiles(site),
        "build_info": info, "bibtex": bibtex(info, config.title, config.author),
        "figure_functions": {ref.name: ref.function for ref in plan},
        "card": {"file": CARD_FILE, "width": CARD_SIZE[0], "height": CARD_SIZE[1]},
        "data_files": {"json": "numbers.json", "csv": "numbers.csv", "profiles": f"data/{Path(config.profiles).name}"},
        "what_if": what_if, "what_if_json": json_for_script(what_if), "playground": None,
    }
    if playground is not None:
        from ..playground import page_data

        variables["playground"] = shown = page_data(playground)
        variables["playground_json"] = json_for_script(shown)
    return variables


def render_pages(root: Path, config: SiteConfig, info, variables: dict, files: dict[str, bytes]) -> int:
    """Every page, the 404 page, the assets and the sitemap, added to `files`; then the strict link check
    over the whole site. Returns how many pages there are."""
    from ..render.pages import Markdown, environment, load_pages, render_layout, render_page
    from .publish import sitemap, strict_check

    site_src = root / "site_src"
    pages = load_pages(site_src / "pages", config.pages, config.source, config.appendix)
    env = environment(site_src / "templates")
    env.filters["csp_sha256"] = csp_sha256
    variables = {**variables, "pages": pages}
    markdown = Markdown()
    for page in pages:
        render_page(page, env, markdown, variables)
    for page in pages:
        files[page.url] = render_layout(page, pages, env, variables).encode("utf-8")
    if pages and (site_src / "templates" / "404.html").exists():
        files["404.html"] = render_standalone(env, "404.html", {**variables, "first_page": pages[0]})
    assets = site_src / "assets"
    for here, _, names in sorted(os.walk(assets, followlinks=True)):  # links inside the project are followed
        for name in sorted(names):
            path = Path(here, name)
            files[f"assets/{path.relative_to(assets).as_posix()}"] = path.read_bytes()
    if info.site_url:
        files["sitemap.xml"] = sitemap(info, [page.url for page in pages])
    strict_check(files, pages)
    return len(pages)


def render_standalone(env, name: str, variables: dict) -> bytes:
    import jinja2

    from ..render.pages import template_error

    try:
        return env.get_template(name).render(**variables).encode("utf-8")
    except jinja2.TemplateError as exc:
        raise template_error(exc, getattr(exc, "filename", None) or f"site_src/templates/{name}") from None
