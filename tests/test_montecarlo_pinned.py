"""The Monte Carlo's committed tokens and checks, pinned: any rewrite of the simulator or of the counting must
reproduce them bit for bit, or the site's convergence figures and numbers would silently move.

The digests were recorded from the table-lookup simulator and byte-packed counting the site used until issue 35
(commit efff8a9), for every case the site runs (the authored drafts and the random profiles of data/site.yaml),
with both replacement rules (the right one and the wrong sampler the negative control runs), plus wide-vocabulary
cases whose breakpoints fall inside table cells. 20,000 rounds each: every checkpoint of the error curves up to
10,000 is met.
"""

import hashlib
from fractions import Fraction as F

import numpy as np
import pytest

from generator.model import convergence, montecarlo
from generator.model.config import load_config
from generator.model.profiles import load_profiles
from support import PROFILES, ROOT

ROUNDS = 20_000
RULES = {"residual": montecarlo.residual_rows, "wrong-sampler": montecarlo.target_rows_resampler}


def cases():
    """(case id, target rows, draft rows, seed) for every case, each with a Generator of its own."""
    profiles, config = load_profiles(PROFILES), load_config(ROOT / "data" / "site.yaml")
    found = [(d.id, profiles.target, d.distributions) for d in profiles.drafts]
    shape = (config.seeds.random_profiles, config.monte_carlo.random_profiles, len(profiles.tokens), profiles.k)
    found += [(case_id, target, drafts) for case_id, _, target, drafts in convergence.random_cases(*shape)]
    rng = np.random.default_rng(130)
    for agreement in (F(0), F(9, 10)):  # 130 tokens, denominators that put breakpoints inside cells
        found.append((f"wide-{agreement}", *convergence.random_profile(rng, 130, 4, agreement, 1000)))
    return [(case_id, target, drafts, 1000 + n) for n, (case_id, target, drafts) in enumerate(found)]


def fixed_rows(target_rows, draft_rows):
    """rows_at for simulate_batch handing every round the same rows."""
    target = np.array(target_rows, dtype=np.float64)
    draft = np.array(draft_rows, dtype=np.float64)

    def rows_at(j, going, proposals):
        rows = (target[j], draft[j]) if j < len(draft) else (target[j], None)
        return tuple(None if r is None else np.broadcast_to(r, (going.size, r.size)) for r in rows)

    return rows_at


def token_digest(batch: montecarlo.Batch) -> str:
    """sha256 of the committed tokens, -1 where a round stopped before the position, position after position."""
    tokens = np.where(batch.reached, batch.tokens, -1).astype("<i2")
    return hashlib.sha256(tokens.tobytes()).hexdigest()[:16]


def checks_digest(checks) -> str:
    return hashlib.sha256(repr(checks).encode()).hexdigest()[:16]


def simulated(target, drafts, seed, rule) -> montecarlo.Batch:
    rng = np.random.default_rng(seed)
    return montecarlo.simulate_batch(fixed_rows(target, drafts), len(drafts), ROUNDS, rng, RULES[rule])


PINNED = {
    "residual": {
        "aligned": ("7cb16521a75aeff2", "f671cbf774a4c7c8"),
        "divergent": ("e3124641ddd7ff3e", "d2e4d497d5f484e5"),
        "random-01": ("7be6f0df0ac6cf0b", "bcafac0d5ae725e1"),
        "random-02": ("f14b43c1d6b0c136", "387380ca1eeb2957"),
        "random-03": ("db013ed9425369ec", "50a67a4e22e106ac"),
        "random-04": ("4661490890193919", "ee69978e29fe0c2f"),
        "random-05": ("e762891b563bb431", "0078d761750c0c89"),
        "random-06": ("6426cd13bd84a902", "5b4fc83d085b955d"),
        "random-07": ("82078f7b35b7133d", "1d7219cdd0dd8b42"),
        "random-08": ("500a827924aadb0b", "935330c2e99b7420"),
        "random-09": ("4fb201b1b05cb516", "0939b22168cea4f8"),
        "random-10": ("3a3cff910b76bffd", "d2eb5e21d8aa584c"),
        "random-11": ("5e1a2f54f7e90055", "665a9b4375311c44"),
        "random-12": ("193a9b1d45b24eff", "a7437a531c58118c"),
        "wide-0": ("099cb4d2fe5140b5", "d0d23855ebbae82c"),
        "wide-9/10": ("8593d803c89143ad", "579ecf2a7460e995"),
    },
    "wrong-sampler": {
        "aligned": ("713090fd739fc52f", "605b292d7ccaf1e5"),
        "divergent": ("8f3b0627e25c126a", "d8926177ffa88814"),
        "random-01": ("35b2b0c0865c871c", "72ac18795003468e"),
        "random-02": ("b6680709177e762a", "f0e8344387602caa"),
        "random-03": ("002ff86198258c30", "ed508dc00c49218f"),
        "random-04": ("7525ec6e82394ec5", "aa8b485f8b5d44ae"),
        "random-05": ("4f5d02659689d7d0", "ed889f45385db2d7"),
        "random-06": ("17e7bed398222cb1", "5bbe449a7d3881b6"),
        "random-07": ("9cb8610f52dd2160", "b2995433ab6a6bbc"),
        "random-08": ("2afb089931690351", "57e577faf44f3cd3"),
        "random-09": ("ee4d85aae6e57551", "62958f3b3e4bd366"),
        "random-10": ("9f9dbc5831afe483", "613700ff94d8a745"),
        "random-11": ("89048b0bd26acc6b", "9738ca97fd298830"),
        "random-12": ("193a9b1d45b24eff", "a7437a531c58118c"),
        "wide-0": ("51537fe93486ad02", "c97bc69801d84a1c"),
        "wide-9/10": ("7e5a6a222f71307d", "c0601218fb7f150b"),
    },
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_the_simulator_commits_the_pinned_tokens_and_the_counting_gives_the_pinned_checks(rule):
    found = {}
    for case_id, target, drafts, seed in cases():
        checks = convergence.convergence(target, drafts, ROUNDS, np.random.default_rng(seed), RULES[rule])
        found[case_id] = (token_digest(simulated(target, drafts, seed, rule)), checks_digest(checks))
    assert found == PINNED[rule]


def test_a_one_round_shift_changes_the_digest():
    """The negative control: the digests see a change as small as one round's draws."""
    case_id, target, drafts, seed = cases()[0]
    batch = simulated(target, drafts, seed, "residual")
    shifted = montecarlo.Batch(np.roll(batch.tokens, 1, axis=1), np.roll(batch.reached, 1, axis=1))
    assert token_digest(shifted) != token_digest(batch)
