"""data/practice.yaml: numbers quoted from real engines, each read exactly and tied to the address it comes from.

Every block names a source (a key of `sources:`); every number is kept as the source printed it (`Quote`:
its exact value and its text), so a page prints 2.29 where the source printed 2.29 and computes with 229/100.
A mistake is one line naming the file and the place: `data/practice.yaml: k_sweep.drafts[1].tpot_ms[2]: ...`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import UserError
from .logreader import Reading
from .readers import load_yaml, read_text, shown

DECIMAL = re.compile(r"-?[0-9]{1,7}(\.[0-9]{1,20})?")


class PracticeError(UserError):
    pass


@dataclass(frozen=True)
class Quote:
    """A number as a source printed it: `value` exactly, `text` as written (what a page prints)."""

    value: Fraction
    text: str

    def __str__(self) -> str:
        return self.text.replace("-", "\u2212")


@dataclass(frozen=True)
class Source:
    key: str
    label: str
    url: str


@dataclass(frozen=True)
class Block:
    """One quoted block: its source and its fields (numbers as Quotes, lists of them, text, or nested blocks)."""

    source: Source
    fields: Mapping[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["fields"][name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True)
class Practice:
    path: str
    sources: Mapping[str, Source]
    blocks: Mapping[str, Block]
    speedups: tuple[Block, ...]

    def quotes(self) -> tuple[tuple[Source, Quote], ...]:
        """Every quoted number with its source, in file order (what the page must show beside a link)."""
        out: list[tuple[Source, Quote]] = []
        for block in (*self.blocks.values(), *self.speedups):
            out.extend((block.source, q) for q in _walk(block.fields))
        return tuple(out)


def _walk(value: Any):
    if isinstance(value, Quote):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _walk(v)
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _walk(v)


# The blocks the page needs and the fields each must have: name -> kind ("n" a number, "n*" a list of numbers,
# "int" a whole number, "int*" a list of them, "text", or a nested schema for each item of a list).
SCHEMA = MappingProxyType(
    {
        "log": MappingProxyType(
            {
                "engine": "text",
                "rounds": "int",
                "draft_length": "int",
                "accepted": "int",
                "per_position": "n*",
                "mean_length": "n",
            }
        ),
        "unconditional_seen": MappingProxyType({"per_position": "n*"}),
        "average_rate": MappingProxyType({"rate": "n", "logged_length": "n"}),
        "k_sweep": MappingProxyType(
            {
                "model": "text",
                "batch": "int",
                "ks": "int*",
                "plain_tpot_ms": "n",
                "drafts": (MappingProxyType({"name": "text", "acceptance_length": "n*", "tpot_ms": "n*"}),),
            }
        ),
        "tied_logprob": MappingProxyType({"logprob": "n"}),
        "k_by_batch": MappingProxyType({"ranges": (MappingProxyType({"largest_batch": "int", "k": "int"}),)}),
    }
)
SPEEDUP_ROW = MappingProxyType(
    {"method": "text", "model": "text", "hardware": "text", "batch": "int", "speedup": "n", "tokens_per_step": "n?"}
)


def load_practice(path: str | Path) -> Practice:
    path = Path(path)
    raw = load_yaml(read_text(path, "data file", PracticeError), str(path), error=PracticeError)
    return parse_practice(raw, str(path))


def parse_practice(raw: Any, source: str) -> Practice:
    def fail(place: str, problem: str) -> PracticeError:
        return PracticeError(f"{source}: {place}: {problem}")

    top = _mapping(raw, "top level", fail)
    expected = {"sources", "speedups", *SCHEMA}
    for key in top:
        if key not in expected:
            raise fail(str(key), f"unknown block (known: {', '.join(sorted(expected))})")
    for key in sorted(expected - top.keys()):
        raise fail(key, "missing")
    sources = {}
    for key, entry in _mapping(top["sources"], "sources", fail).items():
        fields = _fields(entry, {"label": "text", "url": "text"}, f"sources.{key}", fail)
        if not fields["url"].startswith("https://"):
            raise fail(f"sources.{key}.url", f"must be an https:// address, not {shown(fields['url'])}")
        sources[str(key)] = Source(str(key), fields["label"], fields["url"])

    def block(value: Any, schema: Mapping, place: str) -> Block:
        entry = dict(_mapping(value, place, fail))
        name = entry.pop("source", None)
        if name not in sources:
            raise fail(f"{place}.source", f"must name one of sources: ({', '.join(sources)}), not {shown(name)}")
        return Block(sources[name], MappingProxyType(_fields(entry, schema, place, fail)))

    blocks = {name: block(top[name], schema, name) for name, schema in SCHEMA.items()}
    rows = top["speedups"]
    if not isinstance(rows, list) or not rows:
        raise fail("speedups", "must be a list of at least one row")
    speedups = tuple(block(row, SPEEDUP_ROW, f"speedups[{i}]") for i, row in enumerate(rows))
    _agree(blocks, fail)
    return Practice(source, MappingProxyType(sources), MappingProxyType(blocks), speedups)


def _agree(blocks: Mapping[str, Block], fail) -> None:
    """What must agree between fields, each broken rule named at its field."""
    log = blocks["log"]
    if len(log.per_position) != log.draft_length:
        raise fail("log.per_position", f"has {len(log.per_position)} rates for a draft of {log.draft_length}")
    if not 0 <= log.accepted <= log.rounds * log.draft_length:
        raise fail("log.accepted", f"must lie between 0 and rounds x draft_length, not {log.accepted}")
    for name, rates in (("log", log.per_position), ("unconditional_seen", blocks["unconditional_seen"].per_position)):
        for i, (a, b) in enumerate(zip((Quote(Fraction(1), "1"), *rates), rates)):
            if not 0 <= b.value <= a.value:
                raise fail(f"{name}.per_position[{i}]", f"{b.text}: unconditional rates must fall from 1 towards 0")
    sweep = blocks["k_sweep"]
    for i, d in enumerate(sweep.drafts):
        for key in ("acceptance_length", "tpot_ms"):
            if len(d[key]) != len(sweep.ks):
                raise fail(f"k_sweep.drafts[{i}].{key}", f"has {len(d[key])} numbers for {len(sweep.ks)} values of K")


def _mapping(value: Any, place: str, fail) -> Mapping:
    if not isinstance(value, dict):
        raise fail(place, f"must be a mapping, not {shown(value)}")
    return value


def _fields(value: Any, schema: Mapping, place: str, fail) -> dict[str, Any]:
    entry = _mapping(value, place, fail)
    for key in entry:
        if key not in schema:
            raise fail(f"{place}.{key}", f"unknown field (known: {', '.join(schema)})")
    out: dict[str, Any] = {}
    for key, kind in schema.items():
        here = f"{place}.{key}"
        if key not in entry:
            if isinstance(kind, str) and kind.endswith("?"):
                out[key] = None
                continue
            raise fail(here, "missing")
        out[key] = _value(entry[key], kind, here, fail)
    return out


def _value(value: Any, kind: Any, place: str, fail) -> Any:
    if isinstance(kind, tuple):  # a list of nested entries
        if not isinstance(value, list) or not value:
            raise fail(place, "must be a list of at least one entry")
        return tuple(MappingProxyType(_fields(v, kind[0], f"{place}[{i}]", fail)) for i, v in enumerate(value))
    if kind.endswith("*"):
        if not isinstance(value, list) or not value:
            raise fail(place, "must be a list of at least one number")
        return tuple(_value(v, kind[:-1], f"{place}[{i}]", fail) for i, v in enumerate(value))
    kind = kind.rstrip("?")
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            raise fail(place, f"must be text, not {shown(value)}")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**6:
            raise fail(place, f"must be a whole number from 0 to 1,000,000, not {shown(value)}")
        return value
    if isinstance(value, str) and DECIMAL.fullmatch(value):  # "2.10": a trailing zero the source printed
        return Quote(Fraction(value), value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) > 1e6:
        raise fail(place, f"must be a number as the source printed it, such as 2.29, not {shown(value)}")
    text = repr(value)  # the shortest text that reads back as this float: what the source printed
    return Quote(Fraction(text), text)


# --- what the page computes from them --------------------------------------------------------------


@dataclass(frozen=True)
class SweepBest:
    name: str
    best_k: int  # the K of the lowest time per token
    length: Quote
    tpot_ms: Quote
    speedup: Fraction  # plain time per token over the best


@dataclass(frozen=True)
class Tie:
    """An exact tie for the target's top token, and what greedy decoding does with it in floating point."""

    position: int
    tokens: tuple[str, ...]  # the tied tokens, in the site's token order
    probability: Fraction
    pick: str  # the first of the tied in token order: the rule playground/sampler.argmax applies
    logit: float  # log of the probability as a 64-bit float: the same for every tied token
    ulp: float  # the gap to the next float
    ulp_power: int  # that gap is 2 ** ulp_power
    flipped: tuple[str, str]  # the pick with the last tied token's logit one ulp up, the first's one ulp down


@dataclass(frozen=True)
class BatchCurve:
    """Modelled speedup against batch size b for one draft: E[N] max(X, b) / (K c max(X, b) + max(X, b (K + 1))),
    X the roofline's crossover in positions (times in units of one position's arithmetic)."""

    profile_id: str
    name: str
    expected_tokens: Fraction
    points: tuple[tuple[int, Fraction], ...]  # at batch_sizes(the roofline's max_positions)
    small_batch: Fraction  # every b up to the knee: E[N] / (K c + 1)
    break_even: Fraction  # the b where the modelled speedup falls to 1
    large_batch: Fraction  # every b from X on: E[N] / (K c + K + 1)


@dataclass(frozen=True)
class BatchModel:
    crossover: Fraction  # positions where a pass's arithmetic catches up with reading the weights
    knee: Fraction  # the batch whose check scores that many positions: X / (K + 1)
    k: int
    draft_step: Fraction
    curves: tuple[BatchCurve, ...]


@dataclass(frozen=True)
class ArgmaxDraft:
    """A draft that proposes its top token instead of sampling: q is one-hot, so the rule accepts x with
    probability p(x), and a round's expected accepted proposals are the sums of products of those."""

    name: str
    proposals: tuple[str, ...]  # the draft's top token at each position (first in token order on ties)
    accepted: Fraction  # expected accepted proposals per round, drafting by argmax
    sampled: Fraction  # the same, sampling the draft as the rest of the site does


@dataclass(frozen=True)
class PracticeFacts:
    data: Practice
    log: Reading  # the logged rates, read as unconditional
    log_counts: Reading  # the same log from its counts
    seen: Reading  # a user's unconditional rates (their conditional rates are what the paper printed)
    average_rate_limit: Fraction  # 1 / (1 - alpha): the i.i.d. length for any K stays below it
    sweep: tuple[SweepBest, ...]
    tie: Tie
    batch: BatchModel
    argmax: tuple[ArgmaxDraft, ...]


def exact_crossover(roofline) -> Fraction:
    """The roofline's crossover as an exact fraction of its inputs (the floats of site.yaml, read exactly):
    memory time / compute time per position = bytes per parameter x FLOP/s / (2 x bytes/s)."""
    flops = Fraction(roofline.peak_tflops) * 10**12
    return Fraction(roofline.bytes_per_parameter) * flops / (2 * Fraction(roofline.memory_bandwidth_gb_s) * 10**9)


def batch_sizes(largest: int) -> list[int]:
    """The batch sizes a curve is drawn at: every b up to 512, then steps of b // 512 (a few hundred points per
    doubling), so the figure's log axis is as finely drawn up to a million as up to 512; `largest` comes last."""
    sizes, b = [], 1
    while b < largest:
        sizes.append(b)
        b += max(1, b // 512)
    return [*sizes, largest]


def batch_model(profiles, k: int, draft_step: Fraction, crossover: Fraction, max_batch: int) -> BatchModel:
    """profiles: (id, name, E[N]) for each draft."""
    x = crossover
    curves = []
    for pid, name, e, *_ in profiles:

        def speedup(b: int, e=e) -> Fraction:
            plain = max(x, b)
            return e * plain / (k * draft_step * plain + max(x, b * (k + 1)))

        points = tuple((b, speedup(b)) for b in batch_sizes(max_batch))
        even = x * (e - k * draft_step) / (k + 1)  # between the knee and X: e X = k c X + b (k + 1)
        curves.append(BatchCurve(pid, name, e, points, e / (k * draft_step + 1), even, e / (k * draft_step + k + 1)))
    return BatchModel(x, x / (k + 1), k, draft_step, tuple(curves))


def find_tie(tokens: tuple[str, ...], target: tuple[tuple[Fraction, ...], ...]) -> Tie:
    """The first position whose top target probability is shared by two tokens."""
    import math

    for position, row in enumerate(target, start=1):
        top = max(row)
        tied = tuple(t for t, p in zip(tokens, row) if p == top)
        if len(tied) > 1:
            logit = math.log(float(top))

            def pick(logits: list[float], tied=tied) -> str:
                return tied[logits.index(max(logits))]

            up = pick([logit] * (len(tied) - 1) + [math.nextafter(logit, math.inf)])
            down = pick([math.nextafter(logit, -math.inf)] + [logit] * (len(tied) - 1))
            ulp = math.ulp(logit)
            return Tie(position, tied, top, tied[0], logit, ulp, math.frexp(ulp)[1] - 1, (up, down))
    raise AssertionError("the target has no tie for its top token")


def practice_facts(data: Practice, tokens, target, drafts, k: int, draft_step: Fraction, roofline) -> PracticeFacts:
    """drafts: (id, name, E[N], draft rows, expected accepted proposals) of each profile; draft_step the cost
    model's, relative to one target step."""
    from .logreader import read_counts, read_rates

    log = data.blocks["log"]
    rates = " ".join(q.text for q in log.per_position)
    sweep = data.blocks["k_sweep"]
    best = []
    for d in sweep.drafts:
        i = min(range(len(sweep.ks)), key=lambda j: d["tpot_ms"][j].value)
        best.append(
            SweepBest(
                d["name"],
                sweep.ks[i],
                d["acceptance_length"][i],
                d["tpot_ms"][i],
                sweep.plain_tpot_ms.value / d["tpot_ms"][i].value,
            )
        )
    seen = " ".join(q.text for q in data.blocks["unconditional_seen"].per_position)
    return PracticeFacts(
        data,
        read_rates(rates, "unconditional", draft_step),
        read_counts(str(log.rounds), str(log.accepted), str(log.draft_length), draft_step),
        read_rates(seen, "unconditional", draft_step),
        1 / (1 - data.blocks["average_rate"].rate.value),
        tuple(best),
        find_tie(tokens, target),
        batch_model(drafts, k, draft_step, exact_crossover(roofline), roofline.max_positions),
        tuple(argmax_draft(name, tokens, target, rows, sampled) for _, name, _, rows, sampled in drafts),
    )


def argmax_draft(name: str, tokens, target, rows, sampled: Fraction) -> ArgmaxDraft:
    picks = [row.index(max(row)) for row in rows]
    total, reach = Fraction(0), Fraction(1)
    for p, i in zip(target, picks):
        reach *= p[i]
        total += reach
    return ArgmaxDraft(name, tuple(tokens[i] for i in picks), total, sampled)
