"""data/site.yaml as a typed schema: every setting has a type, a default, and an error that names it.

The schema is a table of (key, type, default) so that adding a setting is one line, and so that a
misspelt key is reported instead of silently ignored.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from .errors import UserError


class ConfigError(UserError):
    pass


@dataclass(frozen=True)
class Seeds:
    authored_round: int = 2020
    sampled_rounds: int = 7
    convergence: int = 20230217
    random_profiles: int = 1302
    identity_pairs: int = 31


@dataclass(frozen=True)
class MonteCarlo:
    rounds: int = 100_000
    random_profiles: int = 12
    identity_pairs: int = 5000
    sampled_rounds: int = 6
    sampled_stream_rounds: int = 240  # rounds searched for a drawn rejection when the first few show none
    family_alpha: float = 0.001  # chance that a correct sampler fails any of the convergence tests


@dataclass(frozen=True)
class Speedup:
    """The closed-form speedup curves: i.i.d. acceptance alpha, draft cost c, draft lengths 1..max_k."""
    alphas: tuple[Fraction, ...] = (Fraction(1, 2), Fraction(7, 10), Fraction(4, 5), Fraction(9, 10))
    costs: tuple[Fraction, ...] = (Fraction(1, 20), Fraction(1, 10), Fraction(1, 4))
    max_k: int = 16


@dataclass(frozen=True)
class Build:
    workers: int = 2  # processes that draw figures


@dataclass(frozen=True)
class RooflineSource:
    label: str
    url: str = ""


@dataclass(frozen=True)
class Roofline:
    model_label: str = "a 7-billion-parameter model in 16-bit weights on one datacenter GPU"
    parameters: float = 7e9
    bytes_per_parameter: float = 2.0
    memory_bandwidth_gb_s: float = 2039.0
    peak_tflops: float = 312.0
    max_positions: int = 512
    sources: tuple[RooflineSource, ...] = ()


@dataclass(frozen=True)
class Playground:
    corpus: str = "corpus"  # folder beside site.yaml
    seed: int = 20240605
    rounds: int = 2000  # measured rounds per draft length and kind of text
    generate_chars: int = 120  # how much one press of Generate writes


@dataclass(frozen=True)
class SiteConfig:
    title: str = "Speculative decoding, exactly"
    profiles: str = "profiles.v1.json"
    pages: tuple[str, ...] = ()
    seeds: Seeds = field(default_factory=Seeds)
    monte_carlo: MonteCarlo = field(default_factory=MonteCarlo)
    roofline: Roofline = field(default_factory=Roofline)
    playground: Playground = field(default_factory=Playground)
    speedup: Speedup = field(default_factory=Speedup)
    build: Build = field(default_factory=Build)
    source: str = "<defaults>"

    def profiles_path(self) -> Path:
        return Path(self.source).parent / self.profiles if self.source != "<defaults>" else Path("data") / self.profiles


def load_config(path: str | Path) -> SiteConfig:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(f"{path}: {where}invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if raw is None:
        raw = {}
    config = _build(SiteConfig, raw, str(path), "")
    return _replace(config, source=str(path))


def _replace(obj, **changes):
    values = {f.name: getattr(obj, f.name) for f in fields(obj)}
    values.update(changes)
    return type(obj)(**values)


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
    return cls(**values)


_NESTED = {"Playground": Playground, "Speedup": Speedup, "Build": Build, "Seeds": Seeds, "MonteCarlo": MonteCarlo, "Roofline": Roofline, "RooflineSource": RooflineSource}


def _coerce(type_name: Any, value: Any, source: str, place: str):
    name = type_name if isinstance(type_name, str) else getattr(type_name, "__name__", str(type_name))
    if name in _NESTED:
        return _build(_NESTED[name], value, source, place)
    if name == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{source}: {place}: must be a whole number, not {value!r}")
        return value
    if name == "float":
        if isinstance(value, str):  # PyYAML reads 7.0e9 (no sign in the exponent) as text
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{source}: {place}: must be a number, not {value!r}")
        return float(value)
    if name == "Fraction":
        try:
            exact = Fraction(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else None
        except (ValueError, ZeroDivisionError):
            exact = None
        if exact is None:
            raise ConfigError(f"{source}: {place}: must be an exact number such as 1/20, not {value!r}")
        return exact
    if name == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{source}: {place}: must be text, not {value!r}")
        return value
    if name.startswith("tuple["):
        inner = name[len("tuple["):-len(", ...]")]
        if not isinstance(value, list):
            raise ConfigError(f"{source}: {place}: must be a list")
        return tuple(_coerce(inner, v, source, f"{place}[{i}]") for i, v in enumerate(value))
    raise TypeError(f"no coercion for {name}")
