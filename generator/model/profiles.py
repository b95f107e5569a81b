"""Load the authored profiles file and refuse anything the engine could not trust.

Every probability becomes a Fraction here, once, so that nothing downstream ever sees a float
or a string. Every problem is reported as one DataError line that names the file, where in it
the problem sits (draft id, position, field) and what is wrong, because the person reading it
is editing that file by hand.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from pathlib import Path

from ..errors import UserError
from .readers import load_json, load_yaml, read_text, shown

Row = tuple[Fraction, ...]

# The largest numerator or denominator a profile may use (in lowest terms): the what-if editor, which opens on the
# profiles, works in exact fractions in the reader's browser and takes no larger ones (what-if-core.js maxTerm).
MAX_TERM = 10**6
_FRACTION = re.compile(
    r"^ *(-?[0-9]{1,40}) *(?:/ *([0-9]{1,40}) *)?$", re.ASCII
)  # ASCII digits only: "１/８" is not 1/8
_DRAFT_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$", re.ASCII)
_INVISIBLE = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"})  # control, format (zero-width), unassigned, private
_TOP_KEYS = frozenset({"version", "tokens", "cost_model", "target", "drafts"})
_OPTIONAL_TOP_KEYS = frozenset({"$comment", "notes"})
_DRAFT_KEYS = frozenset({"id", "name", "description", "distributions", "proposals"})
_COST_KEYS = frozenset({"draft_step", "verify_step"})
# What the pages and figures show legibly and the build computes in seconds: more is refused in one line.
MAX_TOKENS = 12
MAX_POSITIONS = 16  # the target's rows before the bonus row, and each draft's
MAX_DRAFTS = 4
MAX_LABEL = 8  # characters of a token label
MAX_NAME = 24  # characters of a draft's name
MIN_VERIFY_STEP = Fraction(1, 10**6)  # the playground prices rounds to a millionth of a verification pass


class DataError(UserError):
    """A problem in an authored data file, already phrased as the one line a person should read."""


@dataclass(frozen=True)
class CostModel:
    draft_step: Fraction
    verify_step: Fraction


@dataclass(frozen=True)
class Draft:
    id: str
    name: str
    description: str
    distributions: tuple[Row, ...]
    proposals: tuple[int, ...]  # token indices, one per position


@dataclass(frozen=True)
class Profiles:
    source: str
    tokens: tuple[str, ...]
    cost_model: CostModel
    target: tuple[Row, ...]  # k position rows, then the bonus row
    drafts: tuple[Draft, ...]

    @property
    def k(self) -> int:
        return len(self.target) - 1

    def draft(self, draft_id: str) -> Draft:
        for d in self.drafts:
            if d.id == draft_id:
                return d
        raise KeyError(draft_id)


def parse_fraction(value: object) -> Fraction:
    """Accept "3/8", "0", "1" (and plain integers); reject floats, which are not exact."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an exact fraction")
    if isinstance(value, int):
        return Fraction(value)
    if not isinstance(value, str):
        raise ValueError(f'{shown(value)} is not an exact fraction; write it as a string such as "3/8"')
    m = _FRACTION.match(value)
    if not m:
        raise ValueError(f'{shown(value)} is not an exact fraction such as "3/8" (ASCII digits, at most 40 each)')
    num, den = int(m.group(1)), int(m.group(2) or 1)
    if den == 0:
        raise ValueError(f"{shown(value)} divides by zero")
    f = Fraction(num, den)
    if abs(f.numerator) > MAX_TERM or f.denominator > MAX_TERM:
        raise ValueError(
            f"{shown(value)} has more digits than the site works with (in lowest terms, numerator and "
            f"denominator up to {MAX_TERM:,})"
        )
    return f


def load_profiles(path: str | Path) -> Profiles:
    path = Path(path)
    text = read_text(path, "profiles file", DataError)
    load = load_yaml if path.suffix in {".yaml", ".yml"} else load_json
    return parse_profiles(load(text, str(path), error=DataError), str(path))


def _visible(label: str) -> str:
    """What a reader sees of a token label: compatibility forms folded, invisible characters dropped."""
    kept = "".join(c for c in label if unicodedata.category(c) not in _INVISIBLE)
    return unicodedata.normalize("NFKC", kept).strip()


def parse_profiles(raw: object, source: str = "<profiles>") -> Profiles:
    """Validate an already-decoded document; pure, so tests can feed it dicts directly."""
    fail = partial(_fail, source)  # fail(where, problem): the error naming the file and the place in it
    if not isinstance(raw, dict):
        raise fail("", "the top level must be an object with keys " + ", ".join(sorted(_TOP_KEYS)))
    _check_keys(raw, _TOP_KEYS, _OPTIONAL_TOP_KEYS, "top level", fail)
    if raw["version"] != 1 or isinstance(raw["version"], bool):
        raise fail("version", f"unsupported version {shown(raw['version'])}; this generator reads version 1")
    tokens = _parse_tokens(raw["tokens"], fail)
    draft_step, verify_step = _parse_cost_model(raw["cost_model"], fail)
    target = _parse_target(raw["target"], tokens, fail)
    drafts = _parse_drafts(raw["drafts"], tokens, len(target) - 1, fail)
    return Profiles(source, tokens, CostModel(draft_step, verify_step), target, drafts)


def _fail(source: str, where: str, problem: str) -> DataError:
    return DataError(f"{source}: {where}: {problem}" if where else f"{source}: {problem}")


def _parse_tokens(tokens: object, fail) -> tuple[str, ...]:
    if not isinstance(tokens, list) or len(tokens) < 2 or not all(isinstance(t, str) and t for t in tokens):
        raise fail("tokens", "must be a list of at least two non-empty strings")
    if len(tokens) > MAX_TOKENS:
        raise fail("tokens", f"{len(tokens)} tokens; at most {MAX_TOKENS} (what every figure shows legibly)")
    for i, t in enumerate(tokens):
        if len(t) > MAX_LABEL:
            raise fail(f"tokens[{i}]", f"{shown(t)} is longer than {MAX_LABEL} characters (figures label each token)")
    seen: dict[str, int] = {}
    for i, t in enumerate(tokens):
        hidden = sorted({f"U+{ord(c):04X}" for c in t if unicodedata.category(c) in _INVISIBLE})
        if hidden:
            raise fail(
                f"tokens[{i}]",
                f"{shown(t)} holds invisible characters ({', '.join(hidden)}); "
                "a reader could not tell it from another label",
            )
        seen_as = _visible(t)
        if not seen_as:
            raise fail(f"tokens[{i}]", f"{shown(t)} shows nothing a reader could see")
        if seen_as in seen:
            same = "duplicate token label" if tokens[seen[seen_as]] == t else "looks the same as"
            raise fail(f"tokens[{i}]", f"{same} {shown(tokens[seen[seen_as]])} (tokens[{seen[seen_as]}])")
        seen[seen_as] = i
    return tuple(tokens)


def _parse_cost_model(cost: object, fail) -> tuple[Fraction, Fraction]:
    if not isinstance(cost, dict):
        raise fail("cost_model", "must be an object with draft_step and verify_step")
    _check_keys(cost, _COST_KEYS, set(), "cost_model", fail)
    steps = {}
    for key in sorted(_COST_KEYS):
        try:
            steps[key] = parse_fraction(cost[key])
        except ValueError as exc:
            raise fail(f"cost_model.{key}", str(exc)) from None
    if steps["draft_step"] < 0:
        raise fail("cost_model.draft_step", "must not be negative")
    if steps["verify_step"] < MIN_VERIFY_STEP:
        raise fail("cost_model.verify_step", f"must be at least {MIN_VERIFY_STEP}, not {steps['verify_step']}")
    return steps["draft_step"], steps["verify_step"]


def _parse_row(value: object, where: str, tokens: tuple[str, ...], fail) -> Row:
    """One distribution over the tokens: a probability per token, each in [0, 1], summing to exactly 1."""
    if not isinstance(value, list):
        raise fail(where, f"must be a list of {len(tokens)} probabilities")
    if len(value) != len(tokens):
        raise fail(where, f"has {len(value)} probabilities, expected {len(tokens)} (one per token)")
    out = []
    for j, cell in enumerate(value):
        try:
            p = parse_fraction(cell)
        except ValueError as exc:
            raise fail(f"{where}, token {shown(tokens[j])}", str(exc)) from None
        if p < 0:
            raise fail(f"{where}, token {shown(tokens[j])}", f"probability {cell} is negative")
        if p > 1:
            raise fail(f"{where}, token {shown(tokens[j])}", f"probability {cell} is above 1")
        out.append(p)
    total = sum(out, Fraction(0))
    if total != 1:
        raise fail(where, f"probabilities sum to {total}, not 1")
    return tuple(out)


def _parse_target(target_raw: object, tokens: tuple[str, ...], fail) -> tuple[Row, ...]:
    if not isinstance(target_raw, list) or len(target_raw) < 2:
        raise fail("target", "must list at least two rows: one per position, then the bonus position")
    k = len(target_raw) - 1
    if k > MAX_POSITIONS:
        raise fail("target", f"{k} positions; at most {MAX_POSITIONS} (what every figure shows legibly)")
    return tuple(
        _parse_row(r, f"target, {'bonus position' if i == k else f'position {i + 1}'}", tokens, fail)
        for i, r in enumerate(target_raw)
    )


def _parse_drafts(drafts_raw: object, tokens: tuple[str, ...], k: int, fail) -> tuple[Draft, ...]:
    if not isinstance(drafts_raw, list) or not drafts_raw:
        raise fail("drafts", "must be a non-empty list of draft profiles")
    if len(drafts_raw) > MAX_DRAFTS:
        raise fail("drafts", f"{len(drafts_raw)} drafts; at most {MAX_DRAFTS} (what every figure shows legibly)")
    drafts: list[Draft] = []
    for n, d in enumerate(drafts_raw):
        draft = _parse_draft(d, n, tokens, k, fail)
        if any(other.id == draft.id for other in drafts):
            raise fail(f"draft {shown(draft.id)}, field id", "duplicate draft id")
        drafts.append(draft)
    return tuple(drafts)


def _parse_draft(d: object, n: int, tokens: tuple[str, ...], k: int, fail) -> Draft:
    label = f"drafts[{n}]"
    if not isinstance(d, dict):
        raise fail(label, "must be an object")
    if isinstance(d.get("id"), str) and d["id"]:
        label = f"draft {shown(d['id'])}"
    _check_keys(d, _DRAFT_KEYS, set(), label, fail)
    for key in ("id", "name", "description"):
        if not isinstance(d[key], str) or not d[key].strip():
            raise fail(f"{label}, field {key}", "must be a non-empty string")
    if len(d["name"]) > MAX_NAME:
        raise fail(f"{label}, field name", f"longer than {MAX_NAME} characters (figures name each draft)")
    if not _DRAFT_ID.match(d["id"]):
        raise fail(
            f"{label}, field id", "must be lower-case ASCII letters, digits and hyphens (it names files and anchors)"
        )
    dists, props = d["distributions"], d["proposals"]
    if not isinstance(dists, list):
        raise fail(f"{label}, field distributions", "must be a list of rows")
    if not isinstance(props, list):
        raise fail(f"{label}, field proposals", "must be a list of token labels")
    if len(dists) != len(props):
        raise fail(
            label, f"{len(dists)} distributions but {len(props)} proposals; there must be one of each per position"
        )
    if len(dists) != k:
        raise fail(
            f"{label}, field distributions",
            f"has {len(dists)} positions but the target has {k} positions plus the bonus ({k + 1} rows)",
        )
    rows = tuple(
        _parse_row(r, f"{label}, position {i + 1}, field distributions", tokens, fail) for i, r in enumerate(dists)
    )
    index = {t: i for i, t in enumerate(tokens)}
    proposals = []
    for i, tok in enumerate(props):
        where = f"{label}, position {i + 1}, field proposals"
        if tok not in index:
            raise fail(where, f"{shown(tok)} is not one of the tokens {shown(', '.join(tokens), 200)}")
        if rows[i][index[tok]] == 0:
            raise fail(
                where, f"the draft gives its own proposal {shown(tok)} probability 0, so it could never propose it"
            )
        proposals.append(index[tok])
    return Draft(d["id"], d["name"], d["description"], rows, tuple(proposals))


def _check_keys(obj: dict, required: set, optional: set, where: str, fail) -> None:
    for key in sorted(required - obj.keys()):
        raise fail(where, f"missing key {key!r}")
    for key in sorted(obj.keys() - required - optional):
        raise fail(where, f"unknown key {shown(key)}")
