import dataclasses
import json
import re
import subprocess
import sys
import tomllib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import generator.playground as pg
from generator.model.analysis import leviathan_speedup
from generator.model.convergence import chi_square_p_value
from generator.model.engine import ACCEPTED, DROPPED, REJECTED, Verdict
from generator.model.montecarlo import residual_rows, simulate_batch, target_rows_resampler
from generator.playground.corpus import CorpusError, load_sources, read_text
from generator.playground.ngram import (
    KINDS,
    PROSE,
    Model,
    count_digest,
    encode,
    fnv1a_32,
    make_corpus,
    split_held_out,
    train_export,
)
from generator.playground.sampler import speculative_round, target_alone, temper_rows
from generator.site.pipeline import load_inputs
from support import copy_project

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = ROOT / "data" / "corpus"
SEED = 20240605
ROUNDS = 2000


@pytest.fixture(scope="module")
def settings():
    config, _ = load_inputs(ROOT)
    return config.playground


@pytest.fixture(scope="module")
def texts(settings):
    out = {}
    for kind in KINDS:
        c = getattr(settings, kind)
        out[kind], _ = load_sources(c.package, c.files, c.books, ROOT / "data", f"playground.{kind}")
    return out


@pytest.fixture(scope="module")
def orders(settings):
    return {
        k: pg.Orders(
            getattr(settings, k).target_order, getattr(settings, k).draft_order, getattr(settings, k).min_count
        )
        for k in KINDS
    }


@pytest.fixture(scope="module")
def built(texts, orders):
    return pg.build_playground(texts, orders, SEED, ROUNDS)


@pytest.fixture(scope="module")
def corpora(texts):
    return {k: make_corpus(k, t) for k, t in texts.items()}


@pytest.fixture(scope="module")
def exports(built):
    """Each pair's export as the page loads it: its models file's JSON."""
    return {k: json.loads(built.pairs[k].models_json) for k in KINDS}


@pytest.fixture(scope="module")
def pairs(exports):
    return {k: pg.load_pair(exports[k]) for k in KINDS}


def uniforms(seed):
    return np.random.default_rng(seed).random


# --- corpora ---------------------------------------------------------------------------------


def test_no_corpus_text_lives_in_the_repository_and_the_readme_names_sources_and_licences(settings):
    assert [p.name for p in CORPUS_DIR.iterdir()] == ["README.md"]
    readme = (CORPUS_DIR / "README.md").read_text(encoding="utf-8")
    for kind in KINDS:
        c = getattr(settings, kind)
        assert c.package and c.package in readme and c.files in readme
    assert "public domain" in readme and "MIT" in readme and "held-out" in readme


def test_each_corpus_package_is_pinned_exactly_in_pyproject(settings):
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    for kind in KINDS:
        package = getattr(settings, kind).package
        pins = [d for d in deps if re.split(r"[=<>~!]", d)[0].strip().lower() == package.lower()]
        assert len(pins) == 1 and "==" in pins[0], f"{package} must be pinned with == in pyproject.toml"


def test_the_corpora_are_big_enough_and_hold_none_of_this_project(texts):
    assert len(texts[PROSE].encode("utf-8")) >= 400_000
    assert len(texts["code"]) >= 100_000
    own = (ROOT / "generator" / "model" / "engine.py").read_text(encoding="utf-8")
    for text in texts.values():
        assert "speculative" not in text.lower()
        assert own.splitlines()[0] not in text


def test_the_prose_corpus_is_prose(texts):
    words = texts[PROSE].split()
    assert sum(w.strip(".,;:!?\"'()").isalpha() for w in words) / len(words) > 0.95
    assert sum(texts[PROSE].count(c) for c in "_{}[]=<>#") == 0


def test_the_held_out_split_is_the_last_tenth_cut_at_a_line_start(texts):
    train, held = split_held_out(texts[PROSE])
    assert train + held == texts[PROSE]
    assert train.endswith("\n")
    assert 0.08 * len(texts[PROSE]) < len(held) <= 0.1 * len(texts[PROSE])


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"aaaaaaaa", "single distinct character"),
        (b"text\x00with a nul", "binary"),
        (b"caf\xe9 au lait", "not UTF-8"),
        (b"bell \x07 here", "control character U+0007"),
        (b"line\r\nand a lone \r here", "control character U+000D"),  # CRLF becomes LF; a lone CR stays, refused
        (b"esc \x1b[0m and caf\xc3\xa9\r\n", "control character U+001B"),
    ],
)
def test_a_bad_corpus_file_is_refused_with_one_line_naming_it(tmp_path, content, problem):
    path = tmp_path / "corpus.txt"
    path.write_bytes(content)
    with pytest.raises(CorpusError) as err:
        read_text(path, "playground.prose")
    message = str(err.value)
    assert message.startswith(f"{path}: playground.prose: ") and problem in message and "\n" not in message


def test_a_corpus_file_with_crlf_line_ends_reads_as_lf_and_tabs_pass(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes("caf\u00e9\tau lait\r\nline two\r\n".encode("utf-8"))
    assert read_text(path, "playground.prose") == "caf\u00e9\tau lait\nline two\n"


def test_a_missing_corpus_file_or_package_is_refused_by_name(tmp_path):
    with pytest.raises(CorpusError, match=r"corpus/absent\.txt: playground\.code: no such corpus file"):
        load_sources("", "corpus/absent.txt", (), tmp_path, "playground.code")
    with pytest.raises(CorpusError, match="not installed"):
        load_sources("no-such-package-here", "*.txt", (), tmp_path, "playground.code")


def test_the_build_stops_on_a_bad_corpus_with_exit_2_and_keeps_the_previous_build(tmp_path):
    project = copy_project(tmp_path / "project")
    out = tmp_path / "site"
    out.mkdir()
    (out / "figures").mkdir()
    (out / "figures" / "manifest.json").write_text("{}", encoding="utf-8")
    (out / "marker.txt").write_text("previous build", encoding="utf-8")
    bad = project / "data" / "corpus" / "prose.txt"
    bad.write_bytes(b"\xff\xfe not utf-8")
    site = project / "data" / "site.yaml"
    text = site.read_text(encoding="utf-8")
    prose_block = re.search(r"  prose:\n(    .*\n)+", text).group(0)
    site.write_text(text.replace(prose_block, "  prose:\n    files: corpus/prose.txt\n"), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(out)],
        cwd=project,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "GENERATOR_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad.relative_to(project)}: playground.prose: not UTF-8"), (
        run.stderr
    )
    assert (out / "marker.txt").read_text(encoding="utf-8") == "previous build"


# --- models ----------------------------------------------------------------------------------


def test_training_twice_gives_an_identical_export(corpora, orders, exports):
    again = pg.export_pair(corpora[PROSE], orders[PROSE])
    assert json.dumps(again, sort_keys=True) == json.dumps(exports[PROSE], sort_keys=True)


def test_the_prose_target_meets_its_held_out_bound_and_each_draft_is_weaker_and_cheaper(built, exports):
    assert built.pairs[PROSE].bits_per_char.target <= 2.2
    for kind in KINDS:
        p = built.pairs[kind]
        assert p.bits_per_char.target < p.bits_per_char.draft - 0.4
        assert p.orders.draft < p.orders.target
        sizes = {name: len(json.dumps(exports[kind][name])) for name in ("target", "draft")}
        assert sizes["draft"] * 4 < sizes["target"]


def test_every_rebuilt_row_is_a_distribution(pairs):
    for target, draft in pairs.values():
        for model in (target, draft):
            for context in ("", "the ", "qzx", "    return ", "\u00e9t\u00e9 ", "(self"):
                context = "".join(c for c in context if c in model.vocab)
                row = model.row(context)
                assert (row > 0).all()
                assert abs(row.sum() - 1) < 1e-12


def test_kneser_ney_rows_follow_the_formula_on_a_tiny_text():
    text = "abracadabra abracadabra cadabra\n"
    vocab = "".join(sorted(set(text)))
    export = train_export(text, vocab, 3, 1)
    model = Model(export, vocab)
    level = export["levels"][2]
    contexts = [level["contexts"][i * 2 : i * 2 + 2] for i in range(len(level["followers"]))]
    i = contexts.index("ab")
    start = sum(level["followers"][:i])
    counts = dict(
        zip(
            level["next"][start : start + level["followers"][i]], level["counts"][start : start + level["followers"][i]]
        )
    )
    assert counts == {"r": text.count("abr")}  # "ab" is always followed by "r"
    a = text.count("abr")
    d3 = level["discounts"][2]
    parent = model.row("b")
    expected = (a - d3) / a + (d3 / a) * parent[vocab.index("r")]
    assert model.row("ab")[vocab.index("r")] == pytest.approx(expected, rel=1e-15)
    # below the top, counts are continuation counts: "br" is preceded only by "a", so it counts once
    middle = export["levels"][1]
    b = middle["contexts"].index("b")
    start = sum(middle["followers"][:b])
    assert dict(
        zip(
            middle["next"][start : start + middle["followers"][b]],
            middle["counts"][start : start + middle["followers"][b]],
        )
    ) == {"r": 1}


@pytest.mark.parametrize(
    "text, vocab",
    [
        ("plain ascii text\n", " \naeilnprstx"),
        ("ascii with unknowns {}\n", " \naceiknostw"),  # the braces are unknown
        ("caf\u00e9 \U0001f600 na\u00efve", " acefnv\u00e9\u00ef\U0001f600"),
        ("", "ab"),
    ],
)
def test_encoding_gives_each_characters_place_in_the_vocabulary(text, vocab):
    # ASCII text takes a one-byte path, other text a UTF-32 one: both must give the plain lookup's indices
    plain = [vocab.index(c) if c in vocab else -1 for c in text]
    assert encode(text, vocab).tolist() == plain
    assert encode(text + "\u00f1", vocab + "\u00f1").tolist() == plain + [len(vocab)]  # the same, not ASCII


@pytest.mark.parametrize("text", ["", "ba\n\tab", "\x00\x7f a z", "caf\u00e9 \U0001f600", "abc" * 1000])
def test_the_vocabulary_is_every_distinct_character_sorted(text):
    from generator.playground.ngram import vocabulary

    assert vocabulary(text) == "".join(sorted(set(text)))
    assert vocabulary(text + "~") != "".join(sorted(set(text))) or "~" in text  # the check can fail


def test_training_refuses_a_text_with_characters_outside_the_vocabulary():
    with pytest.raises(ValueError, match="outside the vocabulary"):
        train_export("abcab", "ab", 2, 1)
    assert train_export("abcab", "abc", 2, 1)["levels"][0]["next"] == "abc"


def test_the_models_measured_are_the_published_export_read_back(built, corpora, orders):
    # the build measures the export it publishes without a JSON round trip: reading the published text back
    # must give exactly the same export (the floats print in full, so JSON loses nothing)
    from generator.playground.ngram import export_json

    for kind in KINDS:
        export = pg.export_pair(corpora[kind], orders[kind])
        assert json.loads(export_json(export)) == export == json.loads(built.pairs[kind].models_json)
        assert len(export_json(export)) == built.pairs[kind].export_bytes
        assert all(
            type(x) is float for m in ("target", "draft") for level in export[m]["levels"] for x in level["discounts"]
        )


def test_tempered_rows_sum_left_to_right_as_the_one_row_sampler_does(pairs, corpora):
    from generator.playground.sampler import apply_temperature, sums_in_order

    rng = np.random.default_rng(4)
    for shape in [(1, 1), (3, 5), (500, 92), (2, 0)]:
        rows = rng.random(shape) ** 8  # spread over many magnitudes, where the order of adding shows
        assert np.array_equal(sums_in_order(rows), np.cumsum(rows, axis=1)[:, -1] if shape[1] else np.zeros(shape[0]))
    rows = rng.random((200, 64)) ** 8
    assert not np.array_equal(sums_in_order(rows), rows[:, ::-1].sum(axis=1))  # another order does differ
    table = pairs["code"][0].table[:300]
    assert np.array_equal(temper_rows(table, 1.0), np.array([apply_temperature(row, 1.0) for row in table.tolist()]))
    for temperature in (0.7, 1.6):
        weights = table ** (1.0 / temperature)
        assert np.array_equal(temper_rows(table, temperature), weights / np.cumsum(weights, axis=1)[:, -1:])


def test_the_models_file_holds_the_export_dumped_once_and_the_page_json_no_models(built, exports):
    for kind in KINDS:
        models = json.dumps(exports[kind], separators=(",", ":"), ensure_ascii=True)
        assert (
            pg.models_script(built, kind)
            == f"(window.PlaygroundModels = window.PlaygroundModels || {{}}).{kind} = {models};\n"
        )
    assert not {"models", "models_json"} & {n for p in pg.page_data(built)["pairs"].values() for n in p}


def plain_fnv1a_32(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def test_the_fnv_hash_gives_the_published_values():
    for data, known in [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968)]:
        assert fnv1a_32(data) == known
    data = np.random.default_rng(11).integers(0, 256, 4099, dtype=np.uint8).tobytes()
    changed = bytes([data[0] ^ 1]) + data[1:]  # the comparison can fail: one bit changed changes the hash
    assert fnv1a_32(changed) != fnv1a_32(data)


def test_the_count_digest_is_fnv_of_the_canonical_counts(built, exports):
    export = exports["code"]["draft"]
    parts = [str(export["order"]), str(export["min_count"])]
    for level in export["levels"]:
        parts += [
            level["contexts"],
            ",".join(map(str, level["followers"])),
            level["next"],
            ",".join(map(str, level["counts"])),
        ]
    assert (
        count_digest(export)
        == f"{plain_fnv1a_32('|'.join(parts).encode('utf-8')):08x}"
        == built.pairs["code"].digests.draft
    )


def test_rows_tempered_once_per_kept_context_equal_rows_tempered_per_round(pairs, corpora):
    # the measurement tempers each model's table of rows once (pg.tempered); looking rows up from it must
    # give exactly what tempering the rows looked up gives, bit for bit
    target, draft = pairs["code"]
    codes = encode(corpora["code"].held_out[:2000], corpora["code"].vocab)
    windows = np.stack([codes[i - 4 : i] for i in range(4, len(codes))])
    for model in (target, draft):
        for temperature in (1.0, 0.7, 1.6):
            assert np.array_equal(
                pg.tempered(model, temperature).rows(windows), temper_rows(model.rows(windows), temperature)
            )
        # the comparison can fail: a transform of the whole table (not row by row) gives other rows
        whole = model.with_rows(lambda rows: rows / rows.sum())
        assert not np.array_equal(whole.rows(windows), model.rows(windows) / model.rows(windows).sum())


def reversed_top_level(export):
    """The export with its longest contexts listed last to first (followers, next and counts moved along)."""
    level = export["levels"][-1]
    length = len(export["levels"]) - 1
    starts = np.concatenate([[0], np.cumsum(level["followers"])]).tolist()
    blocks = [
        (
            level["contexts"][i * length : (i + 1) * length],
            level["followers"][i],
            level["next"][starts[i] : starts[i + 1]],
            level["counts"][starts[i] : starts[i + 1]],
        )
        for i in range(len(level["followers"]))
    ][::-1]
    top = {
        **level,
        "contexts": "".join(b[0] for b in blocks),
        "followers": [b[1] for b in blocks],
        "next": "".join(b[2] for b in blocks),
        "counts": [c for b in blocks for c in b[3]],
    }
    return {**export, "levels": [*export["levels"][:-1], top]}


def test_a_model_finds_its_contexts_in_any_order_the_export_lists_them():
    text = "the cat sat on the mat; the \U0001f600 sat too\n" * 3
    vocab = "".join(sorted(set(text)))
    export = train_export(text, vocab, 4, 1)
    model, shuffled = Model(export, vocab), Model(reversed_top_level(export), vocab)
    assert reversed_top_level(export) != export
    codes = encode(text, vocab)
    windows = np.stack([codes[i - 3 : i] for i in range(3, len(codes))])
    assert np.array_equal(model.rows(windows), shuffled.rows(windows))
    for i in range(3, len(text)):
        assert np.array_equal(model.row(text[:i]), shuffled.row(text[:i])) and np.array_equal(
            model.row(text[:i]), model.rows(windows[i - 3 : i - 2])[0]
        )
    broken = json.loads(json.dumps(export))  # a kept context whose suffix is not kept is refused
    broken["levels"][2] = {**broken["levels"][2], "contexts": "q" * len(broken["levels"][2]["contexts"])}
    with pytest.raises(KeyError):
        Model(broken, vocab + "q")


def test_the_batch_lookup_finds_the_row_the_dict_finds_also_for_unknown_characters(pairs, corpora):
    # rows(windows) looks contexts up by their keys, row(context) in a dict; both must pick the same row
    corpus = corpora[PROSE]
    rng = np.random.default_rng(3)
    text = "".join("\x00" if rng.random() < 0.05 else c for c in corpus.held_out[:3000])  # \x00: not in the vocab
    codes = encode(text, corpus.vocab)
    for model in pairs[PROSE]:
        width = model.order - 1
        windows = np.stack([codes[i - width : i] for i in range(width, len(codes))])
        rows = model.rows(windows)
        for i in range(width, len(codes), 7):
            assert np.array_equal(rows[i - width], model.row(text[i - width : i]))
        # the comparison can fail: the rows of the windows one character on are others
        assert not all(np.array_equal(rows[i - width + 1], model.row(text[i - width : i])) for i in range(width, 200))


def test_a_batch_lookup_gives_the_same_rows_as_one_at_a_time(pairs, corpora):
    target, _ = pairs["code"]
    text = corpora["code"].held_out[:300]
    codes = encode(text, corpora["code"].vocab)
    width = target.order - 1
    windows = np.stack([codes[i - width : i] for i in range(width, len(codes))])
    batch = target.rows(windows)
    for i in range(0, len(windows), 13):
        assert np.array_equal(batch[i], target.row(text[i : i + width]))


# --- greedy ----------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 8])
@pytest.mark.parametrize("kind", KINDS)
def test_greedy_speculative_output_equals_the_target_alone_character_for_character(pairs, built, kind, k):
    target, draft = pairs[kind]
    for prompt in (*built.pairs[kind].prompts[:2], ""):
        alone = target_alone(target, prompt, 60, 0.0)
        text = prompt
        while len(text) - len(prompt) < 60:
            text += speculative_round(target, draft, text, k, 0.0, uniforms(k)).committed
        assert text[len(prompt) : len(prompt) + 60] == alone


def test_greedy_rounds_really_reject_somewhere(pairs):
    target, draft = pairs[PROSE]
    verdicts = []
    text = "And he said "
    for _ in range(20):
        r = speculative_round(target, draft, text, 4, 0.0, uniforms(1))
        verdicts += r.verdicts
        text += r.committed
    assert ACCEPTED in verdicts and REJECTED in verdicts and DROPPED in verdicts
    assert all(isinstance(v, Verdict) for v in verdicts)


# --- readable output (issue 11, item 3) --------------------------------------------------------
#
# Every prose example prompt, sampling at temperature 1 through speculative rounds as the page
# runs them: at least 85% of the generated words (whitespace-separated, compared without case and
# surrounding punctuation, the last possibly cut word left out) occur as words in the prose
# corpus, and at most 1% of the characters are code punctuation. 1,500 characters (about 270
# words) per prompt keep the share's sampling noise near 2 points; the seed is fixed. Greedy output has no run of more
# than 3 spaces. A uniform "model" is the negative control: its words are almost never real.

CODE_MARKS = set("_{}[]()=<>#")


def words_of(text):
    return [w.strip(".,;:!?\"'()").lower() for w in text.split()]


def readable(text, vocabulary):
    words = [w for w in words_of(text)[:-1] if w]
    real = sum(w in vocabulary for w in words) / len(words)
    marks = sum(c in CODE_MARKS for c in text) / len(text)
    return real, marks


@pytest.fixture(scope="module")
def vocabulary(texts):
    return set(words_of(texts[PROSE]))


def speculative_text(pair, prompt, length, k, temperature, seed):
    target, draft = pair
    rng = uniforms(seed)
    text = prompt
    while len(text) - len(prompt) < length:
        text += speculative_round(target, draft, text, k, temperature, rng).committed
    return text[len(prompt) :]


@pytest.mark.parametrize("index", range(3))
def test_sampled_prose_is_made_of_real_words(pairs, built, vocabulary, index):
    prompt = built.pairs[PROSE].prompts[index]
    text = speculative_text(pairs[PROSE], prompt, 1500, built.pairs[PROSE].measurements.best_k, 1.0, SEED + index)
    real, marks = readable(text, vocabulary)
    assert real >= 0.85, (real, text)
    assert marks <= 0.01, (marks, text)


def test_random_characters_fail_the_readability_check(corpora, vocabulary):
    rng = np.random.default_rng(1)
    vocab = corpora[PROSE].vocab
    noise = "".join(vocab[i] for i in rng.integers(0, len(vocab), size=600))
    real, _ = readable(noise, vocabulary)
    assert real < 0.5


@pytest.mark.parametrize("index", range(3))
def test_greedy_prose_never_runs_into_long_blanks(pairs, built, index):
    prompt = built.pairs[PROSE].prompts[index]
    text = speculative_text(pairs[PROSE], prompt, 300, 3, 0.0, 0)
    assert not re.search(r" {4,}", text), text


# --- sampling --------------------------------------------------------------------------------
#
# The first committed character of a round must follow the target's own next-character
# distribution. 20,000 rounds per case through montecarlo.simulate_batch; bins whose expected count
# is under 5 are pooled so the chi-square approximation holds. Threshold p > 1e-3: a correct
# sampler fails that with probability 1/1000 for a random seed, and the seed is fixed, so the test
# cannot flake; a wrong one at these sample sizes lands far below it (the negative control).

STAT_ROUNDS = 20_000
P_THRESHOLD = 1e-3
STAT_CASES = [(PROSE, "the ", 1.0), ("code", "def ", 1.0), ("code", "    ", 0.7), (PROSE, "s, ", 1.6)]


def first_char_p_value(pair, vocab, context, temperature, rule, seed, k=4):
    target, _ = pair
    width = target.order - 1
    codes = encode(context[-width:], vocab)
    codes = np.concatenate([np.full(width - len(codes), -1), codes])
    contexts = np.tile(codes, (STAT_ROUNDS, 1))
    batch = pg.simulate(*pair, contexts, k, temperature, np.random.default_rng(seed), rule)
    p = temper_rows(target.rows(contexts[:1]), temperature)[0]
    return pooled_chi_square(np.bincount(batch.tokens[0], minlength=len(p)), p)


def pooled_chi_square(counts, p):
    n = counts.sum()
    expected = n * p
    if counts[p == 0].sum():
        return 0.0  # a character the target never writes
    big = expected >= 5
    observed, expected = counts[big], expected[big]
    if (~big).any() and n * p[~big].sum() > 0:  # the rare characters, pooled into one bin
        observed = np.append(observed, counts[~big].sum())
        expected = np.append(expected, n * p[~big].sum())
    statistic = float(((observed - expected) ** 2 / expected).sum())
    return chi_square_p_value(statistic, len(observed) - 1)


@pytest.mark.parametrize("kind, context, temperature", STAT_CASES)
def test_speculative_sampling_draws_the_next_character_from_the_target(pairs, corpora, kind, context, temperature):
    p = first_char_p_value(pairs[kind], corpora[kind].vocab, context, temperature, residual_rows, SEED)
    assert p > P_THRESHOLD


@pytest.mark.parametrize("kind, context, temperature", STAT_CASES)
def test_resampling_from_the_target_instead_of_the_residual_fails_the_same_check(
    pairs, corpora, kind, context, temperature
):
    p = first_char_p_value(pairs[kind], corpora[kind].vocab, context, temperature, target_rows_resampler, SEED)
    assert p < P_THRESHOLD


def test_the_one_round_sampler_the_page_mirrors_passes_the_same_check(pairs, corpora):
    target, draft = pairs[PROSE]
    rng = uniforms(SEED)
    firsts = [speculative_round(target, draft, "the ", 3, 1.0, rng).committed[0] for _ in range(3000)]
    counts = np.bincount(encode("".join(firsts), corpora[PROSE].vocab), minlength=len(corpora[PROSE].vocab))
    assert pooled_chi_square(counts, target.row("the ")) > P_THRESHOLD


def test_a_round_commits_its_accepted_prefix_then_one_more_character(pairs):
    target, draft = pairs[PROSE]
    rng = uniforms(3)
    for _ in range(200):
        r = speculative_round(target, draft, "and the ", 5, 1.0, rng)
        accepted = r.verdicts.count(ACCEPTED)
        assert r.verdicts[:accepted] == [ACCEPTED] * accepted
        assert len(r.committed) == accepted + 1
        assert r.committed[:accepted] == r.proposals[:accepted]
        assert len(r.accept_probabilities) == min(accepted + 1, 5)
        if accepted < 5:
            assert r.verdicts[accepted] == REJECTED and r.replacement == r.committed[-1]
            assert set(r.verdicts[accepted + 1 :]) <= {DROPPED}
        else:
            assert r.bonus == r.committed[-1]


# --- measurements and build ----------------------------------------------------------------


def test_measurements_come_from_at_least_2000_rounds_per_kind_and_k(built):
    for kind in KINDS:
        per_k = built.pairs[kind].measurements.per_k
        assert [m.k for m in per_k] == list(range(1, pg.MAX_K + 1))
        assert all(m.rounds >= 2000 for m in per_k)
        assert all(m.verified_by_position[0] == m.rounds for m in per_k)


def test_speedup_is_characters_per_round_over_the_round_cost(built):
    cost = built.cost_model
    for kind in KINDS:
        m = built.pairs[kind].measurements
        for row in m.per_k:
            # exact: the ratio of the counts, over the round cost as the fraction it stands for (0.1 is 1/10)
            round_cost = row.k * Fraction(1, 10) + 1 if (cost.draft_step, cost.verify_step) == (0.1, 1.0) else None
            assert row.chars_per_round == Fraction(row.committed, row.rounds)
            if round_cost is not None:
                assert row.speedup == row.chars_per_round / round_cost
            assert row.speedup == pytest.approx(row.chars_per_round / (row.k * cost.draft_step + cost.verify_step))
            assert 1 <= row.chars_per_round <= row.k + 1
        assert m.best_k == max(m.per_k, key=lambda r: r.speedup).k


def test_the_prediction_is_leviathans_closed_form_at_the_measured_rate(built):
    cost = built.cost_model
    c = Fraction(cost.draft_step).limit_denominator(10**6) / Fraction(cost.verify_step).limit_denominator(10**6)
    for kind in KINDS:
        p = built.pairs[kind]
        first = p.measurements.per_k[0]
        alpha = Fraction(first.accepted_by_position[0], first.rounds)  # K = 1: every round checks one
        assert p.prediction.alpha == alpha == first.acceptance  # exact, from the counts
        for k, value in enumerate(p.prediction.speedup_by_k, start=1):
            assert value == leviathan_speedup(alpha, k, c)
        assert p.prediction.best_k == 1 + int(np.argmax(p.prediction.speedup_by_k))
        assert abs(p.prediction.relative_gap) < 0.25  # the closed form is a fair first guess here


def test_the_build_result_is_plain_json_and_deterministic(built, texts, orders):
    assert json.loads(json.dumps(pg.plain(built))) == pg.plain(built)
    again = pg.build_playground(texts, orders, SEED, ROUNDS)
    assert again.pairs[PROSE].measurements == built.pairs[PROSE].measurements


def test_numbers_report_bits_and_acceptance_for_both_corpora(built):
    numbers = pg.numbers(built)
    for kind in KINDS:
        assert set(numbers[kind]["bits_per_char"]) == {"target", "draft"}
        assert 0 < numbers[kind]["acceptance_k1"] < 1
        digests = built.pairs[kind].digests
        assert numbers[kind]["digests"] == {"target": digests.target, "draft": digests.draft}


def test_example_prompts_come_from_the_held_out_text(built, corpora):
    for kind in KINDS:
        prompts = built.pairs[kind].prompts
        assert len(prompts) == 3
        held = " ".join(corpora[kind].held_out.split())
        for prompt in prompts:
            assert " ".join(prompt.split()) in held


def test_the_page_data_leaves_the_models_to_their_own_files(built, exports):
    page = pg.page_data(dataclasses.replace(built, corpora={"prose": "x"}, licences={"prose": "licence"}))
    assert "models" not in json.dumps(page) and "corpora" not in page and "licences" not in page
    for kind in KINDS:
        script = pg.models_script(built, kind)
        prefix = f"(window.PlaygroundModels = window.PlaygroundModels || {{}}).{kind} = "
        assert script.startswith(prefix)
        assert json.loads(script[len(prefix) :].rstrip(";\n")) == exports[kind]


# --- parity vectors --------------------------------------------------------------------------


def test_parity_vectors_replay_exactly_in_python(exports):
    for kind in KINDS:
        pair = exports[kind]
        target, draft = pg.load_pair(pair)
        vectors = pg.parity_vectors(pair, 7, pg.PARITY_CONTEXTS[kind])
        assert len(vectors["cases"]) >= 16
        for case in vectors["cases"]:
            draws = iter(case["uniforms"])
            r = speculative_round(target, draft, case["context"], case["k"], case["temperature"], draws.__next__)
            assert next(draws, None) is None
            assert (r.verdicts, r.replacement, r.bonus, r.committed) == (
                case["verdicts"],
                case["replacement"],
                case["bonus"],
                case["committed"],
            )


def test_parity_vectors_cover_rejections_bonuses_greedy_and_uncertain_verdicts(exports):
    cases = [c for kind in KINDS for c in pg.parity_vectors(exports[kind], 7, pg.PARITY_CONTEXTS[kind])["cases"]]
    assert any(c["bonus"] for c in cases)
    assert any(c["replacement"] for c in cases)
    assert any(c["temperature"] == 0 and c["replacement"] for c in cases)
    assert any(u is not None for c in cases for u in c["accept_draws"])


def test_characters_outside_the_bmp_are_one_character_each():
    text = pg.astral_text(3)
    corpus = make_corpus("astral", text)
    assert "\U0001f600" in corpus.vocab and len("\U0001f600") == 1
    pair = pg.export_pair(corpus, pg.Orders(4, 2, 2))
    target, _ = pg.load_pair(pair)
    row = target.row("the \U0001f600")
    assert abs(row.sum() - 1) < 1e-12 and len(row) == len(corpus.vocab)


def test_repricing_a_playground_gives_what_building_it_under_that_cost_model_gives(texts, orders, built):
    again = pg.build_playground(texts, orders, SEED, ROUNDS, "1/7", "1")
    assert again != built  # the cost model does change the speedups, best K and prediction
    assert pg.repriced(built, "1/7", "1") == again
    assert pg.repriced(again, 0.1, 1.0) == built


# --- one simulator (issue 13, item 4) --------------------------------------------------------
#
# The playground measures with montecarlo.simulate_batch, the one vectorised simulator (fed fixed
# rows it commits exactly what the profile Monte Carlo commits: tests/test_analysis.py). No second
# copy of the accept rule or the residual may live under generator/playground/: its one-round
# sampler goes through engine.run_round, its many-round measurements through simulate_batch.


def code_without_docstrings(path: Path) -> str:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)  # comments are gone too


def test_the_playground_holds_no_copy_of_the_accept_rule_or_the_residual():
    law = re.compile(r"\b(?:np\.)?(?:min|minimum)\(1|\b(?:np\.)?(?:max|maximum)\(0|residual|excess")
    for path in sorted((ROOT / "generator" / "playground").glob("*.py")):
        assert not law.findall(code_without_docstrings(path)), path.name
    planted = "def accept(p, q):\n    return np.minimum(1.0, p / q)\n"  # the check can fail
    assert law.search(planted)


def accept_rule_calls(source: str) -> list[str]:
    """Calls shaped like min(1, p / q): min, or np.minimum, of 1 (or Fraction(1)) and then a division or a ratio."""
    import ast

    def one(arg) -> bool:
        if isinstance(arg, ast.Constant):
            return arg.value == 1 and not isinstance(arg.value, bool)
        return (
            isinstance(arg, ast.Call)
            and ast.unparse(arg.func) == "Fraction"
            and len(arg.args) == 1
            and one(arg.args[0])
        )

    def ratio(arg) -> bool:  # a division, or a value named for one
        return any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) or isinstance(n, ast.Name) and "ratio" in n.id
            for n in ast.walk(arg)
        )

    return [
        ast.unparse(n)
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Call)
        and ast.unparse(n.func).split(".")[-1] in ("min", "minimum")
        and len(n.args) == 2
        and one(n.args[0])
        and ratio(n.args[1])
    ]


def test_the_accept_rule_is_written_once_exactly_and_once_in_floats():
    homes = {"engine.py": 1, "montecarlo.py": 1}  # engine.accept_probability; montecarlo.accept_edges
    for path in sorted((ROOT / "generator").rglob("*.py")):
        found = accept_rule_calls(path.read_text(encoding="utf-8"))
        assert len(found) == homes.get(path.name, 0), (path, found)
    assert accept_rule_calls("a = min(Fraction(1), p / q)\nb = np.minimum(1.0, ratio)\n") == [  # the check can fail
        "min(Fraction(1), p / q)",
        "np.minimum(1.0, ratio)",
    ]


def test_rounds_sharing_their_first_rows_across_draft_lengths_commit_what_they_commit_alone(pairs, corpora):
    # measure hands every K the rows of the first position from one memo (all rounds start from their context)
    target, draft = (pg.tempered(m, 1.0) for m in pairs[PROSE])
    contexts = pg.measurement_contexts(corpora[PROSE].held_out, corpora[PROSE].vocab, 4, 500, np.random.default_rng(2))
    memo: dict = {}
    for k in (1, 3, 8):
        shared = pg.simulate_tempered(target, draft, contexts, k, np.random.default_rng(k), memo=memo)
        alone = pg.simulate_tempered(target, draft, contexts, k, np.random.default_rng(k))
        assert np.array_equal(shared.tokens, alone.tokens) and np.array_equal(shared.reached, alone.reached)
    assert "first" in memo
    other = pg.measurement_contexts(corpora[PROSE].held_out, corpora[PROSE].vocab, 4, 500, np.random.default_rng(3))
    stale = pg.simulate_tempered(target, draft, other, 3, np.random.default_rng(3), memo=memo)  # the check can fail:
    fresh = pg.simulate_tempered(target, draft, other, 3, np.random.default_rng(3))  # a memo of other contexts
    assert not np.array_equal(stale.tokens, fresh.tokens)


def test_rows_read_from_the_table_in_place_are_the_rows_copied_out(pairs, corpora):
    # the measurement hands simulate_batch TableRows (table[at] without the copy): every way it reads them
    # must give what the copied rows give, and whole simulations must commit the same tokens
    target, draft = (pg.tempered(m, 1.0) for m in pairs[PROSE])
    rng = np.random.default_rng(6)
    at = rng.integers(0, len(target.table), 300)
    rows, copied = pg.TableRows(target.table, at), target.table[at]
    index, tokens, mask = np.arange(300), rng.integers(0, copied.shape[1], 300), rng.random(300) < 0.4
    assert rows.shape == copied.shape and np.array_equal(np.asarray(rows), copied)
    assert np.array_equal(rows[index, tokens], copied[index, tokens]) and np.array_equal(rows[mask], copied[mask])
    assert not np.array_equal(pg.TableRows(target.table, at + 1)[index, tokens], copied[index, tokens])  # can fail
    contexts = pg.measurement_contexts(corpora[PROSE].held_out, corpora[PROSE].vocab, 4, 400, rng)
    for k in (1, 4, 8):
        in_place = pg.simulate_tempered(target, draft, contexts, k, np.random.default_rng(k))

        def copied_rows(j, going, proposals, k=k):
            ctx = np.concatenate([contexts[going], proposals], axis=1)
            return (target.rows(ctx), None) if j == k else (target.rows(ctx), draft.rows(ctx))

        plain = simulate_batch(copied_rows, k, len(contexts), np.random.default_rng(k))
        assert np.array_equal(in_place.tokens, plain.tokens) and np.array_equal(in_place.reached, plain.reached)


def test_verdicts_are_one_enum_from_the_engine_to_the_page_data(pairs):
    from generator.model.engine import run_round
    from generator.model.profiles import load_profiles

    profiles = load_profiles(ROOT / "data" / "profiles.v1.json")
    r = run_round(
        profiles.target, profiles.drafts[0].distributions, np.random.default_rng(1), profiles.drafts[0].proposals
    )
    assert all(isinstance(f.verdict, Verdict) for f in r.frames if f.kind == "verify")
    assert all(isinstance(s, Verdict) for f in r.frames for s in f.statuses)
    assert json.dumps([Verdict.ACCEPTED]) == '["accepted"]'  # what the JavaScript mirror compares with


def bare_verdict_words(source: str) -> list[str]:
    """String constants in Python code that spell a verdict (docstrings and comments are no code)."""
    import ast

    words = {str(v) for v in Verdict}
    tree = ast.parse(source)
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(getattr(n, "body", None), list) and n.body and isinstance(n.body[0], ast.Expr)
    }
    return [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in words and id(n) not in docstrings
    ]


def test_no_code_names_a_verdict_by_a_bare_word():
    # engine.py defines the words; card.py's palette and figure_timeline.py's tiles are keyed by chip states
    # (proposed, replacement and bonus besides the verdicts; a figure imports no engine), which arrive as plain
    # strings from the views and the registry; the log reader's "accepted" is the
    # field (and link part) where a reader types how many proposals were accepted in all, and practice.py's the
    # same count as data/practice.yaml writes it: counts, no verdicts
    every = {str(v) for v in Verdict}
    allowed = {"engine.py": every, "card.py": every, "figure_timeline.py": every}
    allowed |= {"logreader.py": {"accepted"}, "practice.py": {"accepted"}}
    for path in sorted((ROOT / "generator").rglob("*.py")):
        words = set(bare_verdict_words(path.read_text(encoding="utf-8")))
        assert words <= allowed.get(path.name, set()), path
    for path in sorted((ROOT / "site_src" / "templates").rglob("*.html")):
        assert not re.search(r"verdict\s*[=!]=\s*[\"']", path.read_text(encoding="utf-8")), path
    assert bare_verdict_words('if f.verdict == "rejected":\n    pass\n') == ["rejected"]  # the check can fail
