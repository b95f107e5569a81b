"""The site's files, made from what the pipeline's stages computed: the files no template makes (the figures
and their manifest, the numbers, the profiles, the card, the playground's models and corpora), then every
page, the 404 page, the assets and the sitemap, checked together by the strict link check.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.config import SiteConfig
from ..model.facts import Facts, FigureRef
from ..playground.records import Playground
from ..render.figure_registry import drawing_code


def manifest(figures: dict[str, tuple]) -> bytes:
    """What a reviewer compares between two builds (`compare`), with the drawing code's identity, so a review
    tells a data change from a code change (the cache's keys cover every source file; this is only what a
    reviewer is told)."""
    h = hashlib.sha256()
    for path in drawing_code():
        h.update(path.read_bytes())
    code = h.hexdigest()
    entries = {
        name: {
            "file": f"{name}.svg",
            "caption": caption,
            "alt": alt,
            "sha256": hashlib.sha256(svg.encode("utf-8")).hexdigest(),
            "dark": {"file": f"{name}.dark.svg", "sha256": hashlib.sha256(dark.encode("utf-8")).hexdigest()},
            "inputs": {"function": ref.function, "inputs_sha256": ref.inputs, "code_sha256": code},
        }
        for name, (_, svg, dark, alt, caption, ref) in sorted(figures.items())
    }
    return (json.dumps({"figures": entries}, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def data_files(
    config: SiteConfig,
    figures: dict[str, tuple],
    numbers: list,
    card: bytes,
    playground: Playground | None,
    practice: Path | None = None,
    target: dict | None = None,
) -> dict[str, bytes]:
    """The output files no page or template makes: figures, the manifest, the numbers, the data (the profiles
    and, when the site quotes engines, `practice`, the sourced file the quotes come from), the card and the
    playground's models and corpora. `target`: the target's own numbers (the best token trees)."""
    from .publish import CARD_FILE, numbers_csv

    files: dict[str, bytes] = {}
    for name, (_, svg, dark, _, _, _) in figures.items():
        files[f"figures/{name}.svg"] = svg.encode("utf-8")
        files[f"figures/{name}.dark.svg"] = dark.encode("utf-8")
    files["figures/manifest.json"] = manifest(figures)
    summary: dict[str, Any] = {"profiles": numbers}
    if target is not None:
        summary["target"] = target
    if playground is not None:
        from ..playground import corpus_script, models_script
        from ..playground import numbers as playground_numbers

        summary["playground"] = playground_numbers(playground)
        for kind, text in playground.corpora.items():
            files[f"assets/playground-models-{kind}.js"] = models_script(playground, kind).encode("utf-8")
            files[f"assets/corpus/{kind}.txt"] = text.encode("utf-8")
            files[f"assets/corpus/{kind}.js"] = corpus_script(text, kind).encode("utf-8")
            licence = playground.licences.get(kind)
            if licence:
                files[f"assets/corpus/{kind}-LICENSE.txt"] = licence.encode("utf-8")
    files["numbers.json"] = (json.dumps(summary, indent=2) + "\n").encode("utf-8")
    files["numbers.csv"] = numbers_csv(numbers)
    files[f"data/{config.profiles_path().name}"] = config.profiles_path().read_bytes()
    if practice is not None:
        files[f"data/{practice.name}"] = practice.read_bytes()
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


def page_variables(
    config: SiteConfig, facts: Facts, figures: dict[str, tuple], playground: Playground | None, info, practice=None
) -> dict:
    """What every page, widget and the 404 page are rendered with."""
    from ..render.beyond_view import block_stepper, tree_view
    from ..render.sandbox import plain
    from ..render.views import site_view, stepper_data, stepper_profiles
    from ..render.whatif import editor_data
    from .publish import CARD_FILE, CARD_SIZE, bibtex, json_for_script

    plan: tuple[FigureRef, ...] = tuple(ref for (*_, ref) in figures.values())
    site = site_view(facts, config.title, plan)
    what_if = editor_data(facts)
    block_data = block_stepper(facts.beyond)
    variables = {
        "site": site,
        "tokens": facts.tokens,
        "k": facts.k,
        "config": plain(config),  # the settings' values: no methods, no paths
        "figures": {
            name: RenderedFigure(name, svg, alt, caption) for name, (_, svg, _, alt, caption, _) in figures.items()
        },
        "stepper_json": json_for_script(stepper_data(site)),
        "stepper_profiles": stepper_profiles(site),
        "build_info": info,
        "bibtex": bibtex(info, config.title, config.author),
        "figure_functions": {ref.name: ref.function for ref in plan},
        "figure_modules": {ref.name: ref.module for ref in plan},
        "card": {"file": CARD_FILE, "width": CARD_SIZE[0], "height": CARD_SIZE[1]},
        "data_files": {
            "json": "numbers.json",
            "csv": "numbers.csv",
            "profiles": f"data/{Path(config.profiles).name}",
            "practice": f"data/{practice.name}" if practice is not None else None,
        },
        "what_if": what_if,
        "what_if_json": json_for_script(what_if),
        "playground": None,
        "practice": facts.practice,
        "practice_figures": {ref.key: ref.name for ref in plan if ref.each == "practice"},
        "beyond": facts.beyond,
        "beyond_tree": tree_view(facts.beyond),
        "block_stepper": block_data,
        "block_stepper_json": json_for_script(block_data),
    }
    if playground is not None:
        from ..playground import page_data

        variables["playground"] = playground  # the record: exact Fractions, which the pages round
        variables["playground_json"] = json_for_script(page_data(playground))
    return variables


def render_pages(root: Path, config: SiteConfig, info, variables: dict, files: dict[str, bytes]) -> int:
    """Every page, the 404 page, the assets and the sitemap, added to `files`; then the strict link check
    over the whole site. Returns how many pages there are."""
    import jinja2

    from ..render.markdown import markdown_renderer
    from ..render.pages import environment, load_pages, page_view, render_layout, render_page, template_error
    from .publish import sitemap, strict_check

    site_src = root / "site_src"
    pages = load_pages(site_src / "pages", config.pages, config.source, config.appendix, config.beyond)
    env = environment(site_src / "templates")
    env.filters["csp_sha256"] = csp_sha256
    variables = {**variables, "pages": [page_view(p) for p in pages]}
    markdown = markdown_renderer()
    for page in pages:
        render_page(page, env, markdown, variables)
    for page in pages:
        files[page.url] = render_layout(page, pages, env, variables).encode("utf-8")
    if pages and (site_src / "templates" / "404.html").exists():
        env.start_render()
        try:
            first = page_view(pages[0])
            files["404.html"] = env.get_template("404.html").render({**variables, "first_page": first}).encode()
        except jinja2.TemplateError as exc:
            raise template_error(exc) from None
    assets = site_src / "assets"
    for here, _, names in sorted(os.walk(assets, followlinks=True)):  # links inside the project are followed
        for name in sorted(names):
            path = Path(here, name)
            files[f"assets/{path.relative_to(assets).as_posix()}"] = path.read_bytes()
    if info.site_url:
        files["sitemap.xml"] = sitemap(info, [page.url for page in pages])
    strict_check(files, pages)
    return len(pages)
