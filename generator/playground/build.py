"""Each kind's pair trained, exported and measured (build_kind), and the kinds put together under a cost model.

build_kind is what the site build calls, once per kind of text: it trains a target and a draft, exports them
for the page, rebuilds them from that export (so the numbers printed beside the widget come from exactly what
the widget runs), and measures speculative sampling on held-out text of that kind. What it returns holds no
cost model: `assemble` and `repriced` price its counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

import numpy as np

from .block import compare as compare_verifiers
from .block import summary as verifier_summary
from .measure import MAX_K, compare_kinds, exact_cost, measure, prediction, price, step_costs
from .ngram import KINDS, PROSE, Corpus, Model, count_digest, export_json, make_corpus, train_export
from .records import (
    BlockCounts,
    BlockRow,
    ContextChars,
    CorpusChars,
    Digests,
    HeldOutBits,
    Orders,
    Playground,
    PricedPair,
    TrainedPair,
    fields_of,
)
from .rounds import measurement_contexts

EXPORT_VERSION = 2


def export_pair(corpus: Corpus, orders: Orders) -> dict:
    """The pair as the page loads it: plain ints, floats and strings, which JSON gives back exactly (a wire format
    written for JavaScript, so a dict; ngram.Model reads it)."""
    grams: dict = {}  # the draft's n-grams are a subset of the target's: count them once
    return {
        "version": EXPORT_VERSION,
        "vocab": corpus.vocab,
        "target": train_export(corpus.train, corpus.vocab, orders.target, orders.min_count, grams),
        "draft": train_export(corpus.train, corpus.vocab, orders.draft, orders.min_count, grams),
    }


def load_pair(pair: dict) -> tuple[Model, Model]:
    """(target, draft) as the page computes them: from the export alone."""
    return Model(pair["target"], pair["vocab"]), Model(pair["draft"], pair["vocab"])


def pair_digests(pair: dict) -> Digests:
    return Digests(count_digest(pair["target"]), count_digest(pair["draft"]))


def held_out_bits(target: Model, draft: Model, corpus: Corpus) -> HeldOutBits:
    text = corpus.held_out
    return HeldOutBits(len(text), target.bits_per_char(text), draft.bits_per_char(text))


OPENING_KEYWORDS = (
    "return",
    "if",
    "for",
    "while",
    "elif",
    "raise",
    "assert",
    "yield",
)  # each followed by an expression


def example_prompts(corpus: Corpus) -> tuple[str, ...]:
    """Openings of held-out paragraphs (prose) or of held-out lines of code up to a keyword they open with (code)."""
    if corpus.kind == PROSE:
        paragraphs = [paragraph.split() for paragraph in corpus.held_out.split("\n")]
        return tuple(" ".join(words[:6]) + " " for words in paragraphs if len(words) >= 12)[:3]
    lines = corpus.held_out.splitlines()
    prompts: list[str] = []
    used: set[str] = set()
    for before, line in zip(lines, lines[1:]):
        word = line.lstrip().split(" ")[0]
        # a line that opens with a keyword an expression follows ("return ", "if "), after the line before it: the
        # prompt ends there, so the models go on writing code rather than choosing an indentation they cannot count
        code_before = before.strip() and before.strip()[0] not in "\"'#"  # not a docstring or a comment
        if word in OPENING_KEYWORDS and line.lstrip() != word and code_before and word not in used:
            used.add(word)
            prompts.append(before + "\n" + line[: len(line) - len(line.lstrip()) + len(word) + 1])
    return tuple(prompts[:3])


def build_kind(kind: str, text: str, orders: Orders, seed: int, rounds: int, max_k: int = MAX_K) -> TrainedPair:
    """One kind's pair, trained and measured: its part of build_playground, which the site build runs for each
    kind (each kind's rounds draw from their own seeded generators)."""
    if rounds < 1:
        raise ValueError("rounds must be positive")
    corpus = make_corpus(kind, text)
    pair = export_pair(corpus, orders)
    published = export_json(pair)  # (tests/test_playground.py checks that json.loads(published) == pair)
    target, draft = load_pair(pair)
    width = max(target.order, draft.order) - 1
    block_contexts = measurement_contexts(
        corpus.held_out, corpus.vocab, width, rounds, np.random.default_rng([seed, KINDS.index(kind), 1000])
    )
    # token-wise against block verification on the same rounds, per temperature (block.py): counts only
    block = compare_verifiers(target, draft, block_contexts, [seed, KINDS.index(kind), 1001])
    return TrainedPair(
        block=tuple(BlockCounts(**row) for row in block),
        models_json=published,  # what assets/playground-models-KIND.js holds, made once, here
        digests=pair_digests(pair),
        bits_per_char=held_out_bits(target, draft, corpus),
        orders=orders,
        context_chars=ContextChars(orders.target - 1, orders.draft - 1),
        measured=measure(target, draft, corpus, seed, rounds, max_k=max_k),
        prompts=example_prompts(corpus),
        export_bytes=len(published),
        corpus_chars=CorpusChars(len(corpus.train), len(corpus.held_out)),
        vocab_size=len(corpus.vocab),
    )


def build_playground(
    texts: Mapping[str, str],
    orders: Mapping[str, Orders],
    seed: int,
    rounds: int = 2000,
    draft_step=0.1,
    verify_step=1.0,
    max_k: int = MAX_K,
) -> Playground:
    """Everything the page and its static tables need: each kind's build_kind, assembled. texts maps "prose" and
    "code" to their corpus text; draft_step and verify_step are the cost model (floats, Fractions or "1/10")."""
    pairs = {kind: build_kind(kind, texts[kind], orders[kind], seed, rounds, max_k) for kind in KINDS}
    return assemble(pairs, seed, max_k, draft_step, verify_step)


def priced(pair: TrainedPair, draft_step, verify_step) -> PricedPair:
    """A kind's pair with its rounds priced under a cost model, the closed form beside them, the block table."""
    measurements = price(pair.measured, draft_step, verify_step)
    return PricedPair(
        **{name: value for name, value in fields_of(pair).items() if name != "measured"},
        measurements=measurements,
        prediction=prediction(measurements, draft_step, verify_step),
        block_rows=tuple(BlockRow(**verifier_summary(fields_of(row))) for row in pair.block),
    )


def assemble(
    pairs: Mapping[str, TrainedPair],
    seed: int,
    max_k: int,
    draft_step,
    verify_step,
    generate_chars: int | None = None,
    corpora: Mapping[str, str] | None = None,
    licences: Mapping[str, str | None] | None = None,
) -> Playground:
    """The playground from each kind's build_kind (pairs in the order of KINDS), priced under the cost model;
    the site build adds the corpora, their licences and how much a press of Generate writes."""
    return Playground(
        kinds=tuple(KINDS),
        max_k=max_k,
        pairs=MappingProxyType({kind: priced(p, draft_step, verify_step) for kind, p in pairs.items()}),
        cost_model=step_costs(draft_step, verify_step),
        cost_model_exact=exact_cost(draft_step, verify_step),
        temperature=1.0,
        seed=seed,
        comparison=compare_kinds({kind: p.measured for kind, p in pairs.items()}),
        generate_chars=generate_chars,
        corpora=MappingProxyType(dict(corpora or {})),
        licences=MappingProxyType(dict(licences or {})),
    )


def repriced(data: Playground, draft_step, verify_step) -> Playground:
    """The playground under another cost model (floats, Fractions or "1/10" strings): the rounds as they were."""
    pairs = {}
    for kind, p in data.pairs.items():
        measurements = price(p.measurements.per_k, draft_step, verify_step)
        predicted = prediction(measurements, draft_step, verify_step)
        pairs[kind] = replace(p, measurements=measurements, prediction=predicted)
    return replace(
        data,
        pairs=MappingProxyType(pairs),
        cost_model=step_costs(draft_step, verify_step),
        cost_model_exact=exact_cost(draft_step, verify_step),
    )
