"""The opening and sections 1-2: the simulated system at its defaults, and Algorithm 1 run."""

from __future__ import annotations

import numpy as np

from sitebuild.figures_data import SAMPLING_SEED, SAMPLING_TRIALS
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import Number, at, first_where, name, percent, plain, times
from specmodel.model.scenario import default_scenario
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.sampling import total_variation_distance, toy_demo


def numbers(settings: Settings) -> dict[str, Number]:
    """Names of the deployment, the default scenario at 1, 64 and 1,024 sequences, the ladder,
    and the toy run of Algorithm 1."""
    dep = settings.deployment
    n: dict[str, Number] = {
        "hardware_name": name(get_hardware(dep.hardware).name),
        "target_name": name(get_architecture(dep.target).name),
        "draft_name": name(get_architecture(dep.draft).name),
        "big_draft_name": name(get_architecture(dep.big_draft).name),
        "generated_tokens": plain(default_scenario(settings).generated_tokens, 0),
    }
    d, b64, b1024 = one(settings), one(settings, concurrency=64), one(settings, concurrency=1024)
    n["speedup_b1"] = at(times(d.speedup))
    n["spec_tps_b1"] = at(plain(d.spec_tokens_per_s, 0))
    n["base_tps_b1"] = plain(d.base_tokens_per_s, 0)
    n["mal_b1"] = plain(d.mean_acceptance_length)
    n["draft_share_b1"] = percent(d.draft_share)
    n["arith_b1"] = times(d.arithmetic_ratio)
    n["arith_g10"] = times(one(settings, gamma=10).arithmetic_ratio)
    n["speedup_b64"] = at(times(b64.speedup), concurrency=64)
    n["slower_b64"] = at(percent(1 - b64.speedup), concurrency=64)
    n["mal_b64"] = plain(b64.mean_acceptance_length)
    n["arith_b64"] = times(b64.arithmetic_ratio)
    n["speedup_b1024"] = at(times(b1024.speedup), concurrency=1024)
    ngram = one(settings, concurrency=LADDER, drafter="ngram").speedup
    n["ngram_min_2048"] = times(ngram.min())
    n["ngram_max_2048"] = times(ngram.max())
    crossing = one(settings, concurrency=LADDER).speedup
    first_loss = int(LADDER[np.argmax(crossing < 1)])
    n["loss_from_b"] = at(plain(first_loss, 0), concurrency=first_loss)
    at_gamma1 = one(settings, concurrency=LADDER, gamma=1).speedup
    n["speedup_b64_g1"] = at(times(at_gamma1[6]), concurrency=64, gamma=1)
    n["loss_from_b_g1"] = first_where(LADDER, at_gamma1 < 1)
    demo = toy_demo(seed=SAMPLING_SEED, trials=SAMPLING_TRIALS)
    n["sampling_trials"] = plain(demo.trials, 0)
    n["sampling_acceptance"] = plain(demo.acceptance_rate, 3)
    n["sampling_expected"] = plain(demo.expected_acceptance, 3)
    n["sampling_tv"] = plain(total_variation_distance(demo.output, demo.p), 4)
    return n
