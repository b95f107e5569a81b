"""The facts every page and figure reads, computed once from the data, and the views templates get."""

import ast
import dataclasses
from fractions import Fraction as F
from pathlib import Path

import pytest

from generator.model import analysis
from generator.model import facts as facts_module
from generator.model.config import load_config
from generator.model.facts import build_facts
from generator.model.profiles import load_profiles
from generator.render.views import site_view, stepper_data
from support import ROOT


@pytest.fixture(scope="module")
def inputs():
    config = load_config(ROOT / "data" / "site.yaml")
    return config, load_profiles(config.profiles_path())


@pytest.fixture(scope="module")
def facts(inputs):
    from generator.model.practice import load_practice

    config, profiles = inputs
    return build_facts(profiles, config, practice=load_practice(ROOT / "data" / "practice.yaml"))


@pytest.fixture(scope="module")
def ctx(facts):
    return site_view(facts, "title")


def test_every_profile_view_carries_the_engine_numbers(ctx):
    assert ctx.profile("aligned").expected_tokens == F(2009, 512)
    assert ctx.profile("divergent").speedup == F(1343, 768)
    for p in ctx.profiles:
        assert p.expected_tokens == p.expected_tokens_partial_products == sum(p.partial_products)
        assert sum(prob for _, prob in p.round_lengths) == 1


class Always:
    """Uniform draws that are all the same number: 0 keeps every check left to chance, 1 - 2^-53 rejects it."""

    def __init__(self, u: float):
        self.u = u

    def random(self) -> float:
        return self.u


def test_the_authored_rounds_frame_counts_and_the_closed_form_agree_with_the_engine(ctx):
    """The aligned worked round leaves position 2 to a draw: 8 frames when it keeps it (the site's seed does), 4 when
    it rejects it; the divergent one is certain throughout (5). Both bounds come from running the engine with every
    draw keeping and every draw rejecting."""
    from generator.model.engine import run_round
    from generator.model.requirements import authored_rounds

    config = load_config(ROOT / "data" / "site.yaml")
    profiles = load_profiles(config.profiles_path())
    rounds = authored_rounds(profiles, config.seeds.authored_round)
    for d, r in zip(profiles.drafts, rounds):
        p = ctx.profile(d.id)
        assert p.frame_count == len(r.frames)
        counts = [
            len(run_round(profiles.target, d.distributions, Always(u), d.proposals).frames) for u in (0, 1 - 2**-53)
        ]
        assert p.frame_count_bounds == (min(counts), max(counts)), d.id
    assert ctx.profile("aligned").frame_count == 8 and ctx.profile("aligned").frame_count_bounds == (4, 8)
    assert ctx.profile("divergent").frame_count == 5 and ctx.profile("divergent").frame_count_bounds == (5, 5)


def test_frame_ids_are_unique_across_every_round(ctx):
    ids = [f.id for p in ctx.profiles for r in p.rounds for f in r.frames]
    assert len(ids) == len(set(ids))


def test_the_sampled_rounds_include_a_rejection_decided_by_a_draw(ctx):
    for p in ctx.profiles:
        assert any(f.verdict == "rejected" and f.u is not None and f.ratio < 1 for r in p.sampled for f in r.frames), (
            p.id
        )


def test_chips_mark_the_replacement_and_the_dropped_proposals(ctx):
    done = ctx.profile("divergent").authored.frames[-1]
    assert [c.state for c in done.chips] == ["accepted", "accepted", "rejected", "replacement", "dropped", "dropped"]
    bonus = ctx.profile("aligned").authored.frames[-1]
    assert bonus.chips[-1].state == "bonus"


def test_the_positions_table_shows_overlap_excess_and_residual(ctx):
    third = ctx.profile("divergent").positions[2]
    assert sum(third.overlap) == third.accept_rate == F(5, 8)
    assert third.excess_mass == 1 - third.accept_rate
    assert sum(third.residual) == 1
    assert ctx.profile("divergent").positions[-1].is_bonus


def test_the_four_worth_noticing_facts_point_at_real_frames(ctx):
    notable = ctx.notable
    assert notable.outright[1].ratio >= 1 and notable.outright[1].verdict == "accepted"
    assert notable.target_zero[1].p_target == 0 and notable.target_zero[1].verdict == "rejected"
    assert notable.replacement[1].replacement != notable.replacement[1].proposal


def test_speedup_curves_mark_the_best_draft_length(ctx):
    for curve in ctx.speedup_curves:
        assert curve.best_speedup == max(s for _, s in curve.points)
        assert curve.best_k == analysis.best_draft_length(curve.alpha, curve.cost, len(curve.points))


def test_the_roofline_floor_and_crossover_follow_from_the_inputs(ctx):
    r = ctx.roofline
    assert r.memory_ms == pytest.approx(r.weight_bytes / (r.memory_bandwidth_gb_s * 1e6))
    assert r.crossover_positions == pytest.approx(r.memory_ms / r.compute_ms_per_position)
    assert r.times_ms[0] == pytest.approx(r.memory_ms)


def test_the_identity_and_convergence_summaries_cover_what_the_issue_asks(ctx):
    assert ctx.identity.random_pairs >= 5000 and ctx.identity.failures == 0
    conv = ctx.convergence
    assert len(conv.cases) >= 14 and conv.rounds >= 100_000 and conv.passed


def test_the_stepper_json_lists_exactly_the_rendered_frames(ctx):
    data = stepper_data(ctx)
    ids = [f["id"] for p in data["profiles"] for r in p["rounds"] for f in r["frames"]]
    assert len(set(ids)) == len(ids)  # each frame once, in the order the rounds are offered
    assert sorted(ids) == sorted(f.id for p in ctx.profiles for r in p.rounds for f in r.frames)


def test_identity_failures_are_counted_not_assumed(inputs, monkeypatch):
    """Negative control for the page's "Failures: 0": a pair that breaks the identity is counted."""
    config, profiles = inputs
    broken = iter([False])
    monkeypatch.setattr(analysis, "identity_holds", lambda t, d: next(broken, True))
    assert facts_module.identity_facts(profiles, config).failures == 1


def _all_dataclasses(value, seen=None):
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            yield from _all_dataclasses(getattr(value, f.name), seen)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _all_dataclasses(v, seen)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _all_dataclasses(v, seen)


def test_facts_and_views_are_frozen_all_the_way_down(facts, ctx):
    found = list(_all_dataclasses(facts)) + list(_all_dataclasses(ctx))
    assert len(found) > 100
    for obj in found:
        assert type(obj).__dataclass_params__.frozen, type(obj).__name__
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.k = 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.profiles[0].authored = None


SUBPACKAGES = ("model", "render", "site", "playground", "commands")


def _module_path(name: str) -> Path:
    """generator/<name>.py for a module below every subpackage, else generator/<sub>/<name>.py."""
    found = [p for p in (ROOT / "generator").glob(f"*/{name}.py")]
    top = ROOT / "generator" / f"{name}.py"
    return top if top.exists() or not found else found[0]


def _imports(path: Path) -> set[str]:
    """The generator modules a file imports, by their own name (engine, not model.engine)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("generator")):
            module = (node.module or "").removeprefix("generator").strip(".")
            leaf = module.split(".")[-1] if module else ""
            if not leaf or leaf in SUBPACKAGES and leaf != "playground":
                names.update(a.name for a in node.names)
            else:
                names.add(leaf)
    return names


LAYERS = {  # module -> the generator modules it may import
    "readers": {"errors"},
    "engine": set(),
    "requirements": {"engine", "profiles", "readers", "playground"},  # what the pages need of the data
    "analysis": {"engine", "verifiers"},  # exact numbers
    "verifiers": {"engine"},  # block verification, trees, several guesses: exact, pure
    "beyond": {"engine", "profiles", "verifiers"},  # the facts of the part beyond the main path
    "block_batch": {"montecarlo"},  # block verification for many rounds at once, in floats (the playground)
    "montecarlo": {"engine"},  # the one float copy of the rule
    "convergence": {"analysis", "engine", "montecarlo"},  # the checks the Monte Carlo runs
    "checks": {"analysis", "config", "convergence", "montecarlo", "profiles"},  # the Monte Carlo's facts
    "facts": {
        "analysis",
        "beyond",
        "checks",
        "config",
        "convergence",
        "decimals",
        "engine",
        "practice",
        "profiles",
        "requirements",
    },
    "logreader": {"analysis"},  # an engine's logged acceptance, read exactly (the log reader's Python twin)
    "practice": {"errors", "logreader", "readers"},  # data/practice.yaml and what the page computes from it
    "views": {"decimals", "engine", "facts", "pages"},
    "decimals": set(),  # the one rounding rule: every decimal a page or a script prints
    "palette": set(),
    "figure_words": {"decimals"},  # the words of alt texts and captions, their decimals by the pages' rule
    "chart": {"palette"},  # matplotlib: the canvas, the style, the collision check and the SVG
    "figures": {"chart", "decimals", "figure_words", "palette"},  # the charts, drawn on chart.py's canvas
    "figure_timeline": {"chart", "figure_words", "palette"},  # the opening picture, in a module of its own
    "figures_practice": {"chart", "figure_words", "figures", "palette"},  # the page "In practice"'s charts
    "figures_verifiers": {"chart", "figure_words", "figures", "palette"},  # the beyond part's charts
    "figure_registry": {  # the drawing modules, each importing matplotlib only where it draws
        "digest",
        "facts",
        "figure_timeline",
        "figure_words",
        "figures",
        "figures_practice",
        "figures_verifiers",
        "practice",
    },
    "report": {"errors"},  # what a build reports; a failure as one line
    "card": {"errors"},  # matplotlib's Agg canvas
    "cache": {"digest", "paths"},  # the one cache: trusts nothing it reads
    "output": {"cache", "publish", "report"},  # the atomic write
}


@pytest.mark.parametrize("module", sorted(LAYERS))
def test_each_layer_imports_only_the_layers_below_it(module):
    imported = _imports(_module_path(module))
    assert imported <= LAYERS[module], f"{module} imports {sorted(imported - LAYERS[module])}"


def _subpackages_imported(path: Path) -> set[str]:
    """The generator subpackages (model, render, site, commands, playground) a file imports from."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]  # ("generator", "model")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                parts = (*base, *(node.module or "").split(".")) if node.module else base
            else:
                parts = tuple((node.module or "").split("."))
            if len(parts) > 1 and parts[0] == "generator":
                found.add(parts[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("generator.")}
    return found


@pytest.mark.parametrize(
    "layer, forbidden",
    [("model", {"render", "site", "commands"}), ("render", {"site", "commands"}), ("site", {"commands"})],
)
def test_data_flows_one_way_model_then_render_then_site(layer, forbidden):
    """The model imports nothing from rendering or the site build; rendering nothing from the site build."""
    files = sorted((ROOT / "generator" / layer).rglob("*.py"))
    assert files
    wrong = {path.name: sorted(_subpackages_imported(path) & forbidden) for path in files}
    assert {name: found for name, found in wrong.items() if found} == {}


def test_the_layering_check_sees_a_forbidden_import(tmp_path):
    """Negative control: a model file that imports the site build is caught."""
    fake = ROOT / "generator" / "model" / "_layering_probe.py"
    fake.write_text("from ..site.cache import Cache\nfrom generator.render import views\n", encoding="utf-8")
    try:
        assert _subpackages_imported(fake) == {"site", "render"}
    finally:
        fake.unlink()


def test_every_registry_job_is_drawn_by_its_entry_s_function_which_takes_its_inputs(facts):
    """Each job's arguments bind to its drawing function's signature, so a renamed parameter fails here rather
    than when a figure is next drawn; the job names (for the manifest and the figure's credit line) the function
    that draws it and its module."""
    import inspect

    from generator.render import figure_registry

    jobs = figure_registry.jobs(facts)
    assert {j.ref.key for j in jobs} == {spec.key for spec in figure_registry.REGISTRY}
    for job in jobs:
        assert job.draw is next(s.function for s in figure_registry.REGISTRY if s.key == job.ref.key)
        assert f"generator.render.{job.ref.module}.{job.ref.function}" == f"{job.draw.__module__}.{job.draw.__name__}"
        inspect.signature(job.draw).bind(**job.kwargs)  # raises TypeError on a missing or unknown argument


def _imported_files(path: Path) -> set[Path]:
    """The files of generator/ a file imports, read from its import statements."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]  # ("generator", "render")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("generator.")):
            base = package[: len(package) - node.level + 1] if node.level else ()
            modules = [(*base, *node.module.split("."))] if node.module else [(*base, a.name) for a in node.names]
            found |= {f for f in (ROOT.joinpath(*m).with_suffix(".py") for m in modules) if f.is_file()}
    return found


def test_the_manifest_s_drawing_code_is_every_module_the_drawing_functions_import():
    """The manifest's code identity covers figure_registry.drawing_code(): the drawing functions' modules and,
    in turn, every module of generator/ they import (found there by what the code uses, here by the import
    statements). A module the drawing code takes only constants from is missed there: this says so."""
    from generator.render import figure_registry

    todo = [ROOT.joinpath(*spec.function.__module__.split(".")).with_suffix(".py") for spec in figure_registry.REGISTRY]
    found: set[Path] = set()
    while todo:
        path = todo.pop()
        if path not in found:
            found.add(path)
            todo += _imported_files(path)
    assert {"chart.py", "palette.py", "figure_words.py", "decimals.py"} <= {p.name for p in found}  # the control
    assert sorted(figure_registry.drawing_code()) == sorted(found)
