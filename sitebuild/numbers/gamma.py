"""Section 6, why gamma has a ceiling: the speedup against gamma, truncation, and the
falling profile against the i.i.d. one."""

from __future__ import annotations

import numpy as np

from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, at, percent, plain, times
from specmodel.model import acceptance as acc
from specmodel.model.scenario import DEFAULTS, GAMMAS
from specmodel.model.settings import Settings


def numbers(settings: Settings) -> dict[str, Number]:
    """Speedup against gamma at 1 and 32 sequences, the i.i.d. closed form at the default
    alpha, and the falling profile's per-position acceptance."""
    alpha = DEFAULTS["alpha"]
    gammas = np.array(GAMMAS)
    curve1 = one(settings, gamma=gammas).speedup
    curve32 = one(settings, concurrency=32, gamma=gammas).speedup
    n: dict[str, Number] = {f"speedup_g{g}": at(times(curve1[g - 1]), gamma=g) for g in (1, 3, 4, 6, 10)}
    n["best_gamma_b1"] = plain(gammas[np.argmax(curve1)], 0)
    n["best_gamma_b32"] = plain(gammas[np.argmax(curve32)], 0)
    n["best_speedup_b32"] = times(curve32.max())
    curve64 = one(settings, concurrency=64, gamma=gammas).speedup
    n["best_gamma_b64"] = plain(gammas[np.argmax(curve64)], 0)
    n["best_speedup_b64"] = at(times(curve64.max()), concurrency=64, gamma=int(gammas[np.argmax(curve64)]))
    n["speedup_b32_g10"] = at(times(curve32[-1]), concurrency=32, gamma=10)
    n["ceiling_a75"] = plain(acc.tokens_per_iteration_ceiling(alpha), 0)
    e4, e10, e17 = (float(acc.closed_form_tokens_per_iteration(alpha, g)) for g in (4, 10, 17))
    n["tokens_g4"] = plain(e4)
    n["tokens_g10"] = plain(e10)
    n["tokens_g17"] = plain(e17)
    n["tokens_g10_gain"] = percent(e10 / e4 - 1)
    n["survive_17_every"] = plain(1 / float(acc.per_position_acceptance(alpha, 17, 1.0)[-1]), 0)
    d, same = one(settings), one(settings, acceptance="same")
    n["speedup_same"] = at(times(same.speedup), acceptance="same")
    n["mal_same"] = plain(same.mean_acceptance_length)
    n["same_flattering"] = percent(same.mean_acceptance_length / d.mean_acceptance_length - 1)
    for j, u in enumerate(np.ravel(d.per_position), start=1):
        n[f"per_pos_{j}"] = plain(u, 3)
    n["fourth_used_every"] = plain(1 / float(np.ravel(d.per_position)[3]), 1)
    n["falling_ratio"] = plain(settings.constants.FALLING_RATIO)
    return n
