"""Advice for a real deployment: from vLLM's measured acceptance to a recommended gamma.

Input: the per-position acceptance a vLLM server measured (``accepted_per_pos / num_drafts``,
see :mod:`specmodel.vllm.metrics`), and what the user says about the deployment:
concurrency B, context T, the drafter (``--drafter`` or vLLM's ``--speculative-config``),
the accelerator. Everything here is pure computation on those; formatting is in
:func:`format_advice` and :func:`advice_dict`.

The rule (every number from the model, :func:`specmodel.evaluate_per_position`):

1. the measured positions m bound gamma: acceptance of a position never drafted is unknown,
   so the candidates are gamma = 1..m, each keeping the first gamma measured positions;
2. ``s_g`` = predicted speedup over plain decoding at gamma g with the deployment's drafter
   at B and T; the recommended gamma is the argmax if its speedup exceeds 1 + MIN_GAIN
   (the model's calibration tolerance), else 0 (no speculation);
3. ``z_g`` = the same with a zero-cost drafter (``ngram``: no weights, cache or FLOPs of its
   own, as an n-gram lookup) *at the same measured acceptance*;
4. verdict, first that applies:

   * ``switch-drafter``: the drafter has a cost, ``max z > 1 + MIN_GAIN``, and either
     ``max s <= 1 + MIN_GAIN`` or the
     drafter keeps less than :data:`CLEARLY_BEATEN_GAIN_SHARE` of the zero-cost gain,
     ``max s - 1 < share (max z - 1)``; the recommended gamma is then the argmax of z;
   * ``off``: the recommended gamma is 0;
   * ``keep``: the recommended gamma is the deployed one;
   * ``lower-gamma``: otherwise (0 < recommended < deployed).

The article's rules of thumb (a good draft model at gamma ~4 for a few sequences; a
zero-cost drafter at gamma 2-3 for tens or hundreds; cut gamma where per-position acceptance
falls below ~0.15) are not thresholds here; in the article's scenario the rule roughly
reproduces them (one sequence, Qwen3-0.6B: gamma 3, whose 4th position was accepted 0.12
of the time; 16 or more sequences: switch to a zero-cost drafter).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.formatting import times_distinct as _times
from specmodel.model.drafters import check_drafter, drafter_kind
from specmodel.model.evaluate import evaluate_per_position
from specmodel.model.scenario import DEFAULTS
from specmodel.model.settings import Settings, current
from specmodel.model.types import FloatArray
from specmodel.vllm.speculative_config import ZERO_COST_DRAFTER, Deployment, deployment_from_drafter

#: A drafter with a cost is "clearly beaten" when it keeps less than this share of the gain
#: (speedup - 1) that a zero-cost drafter would reach at the same acceptance. Conservative,
#: because "the same acceptance" flatters the alternative (n-gram lookup usually accepts
#: less than a draft model, and an MTP head needs a target trained with one). At a third,
#: the article's scenario (Qwen3-0.6B, alpha 0.75, falling, T = 2048) keeps its draft model
#: up to 12 sequences and switches from 16, where the draft model keeps 31 % of the gain.
CLEARLY_BEATEN_GAIN_SHARE = 1.0 / 3.0

#: A predicted gain must exceed this to count: the tolerance of the article's speedups in
#: the calibration table (3 %). A smaller predicted gain is within the model's own error, and
#: is no reason to turn speculation on or to change drafters.
MIN_GAIN = 0.03

VERDICTS = ("keep", "lower-gamma", "switch-drafter", "off")


@dataclass(frozen=True)
class Advice:
    """The inferred acceptance, the predictions and the verdict."""

    per_position: tuple[float, ...]  #: measured unconditional acceptance u_1..u_m
    conditional: tuple[float, ...]  #: a_j = u_j / u_{j-1}
    deployment: Deployment
    deployed_gamma: int
    concurrency: int
    context: int
    hardware: str
    target: str
    engine: str  #: the engine profile that priced the passes
    speedup: tuple[float, ...]  #: s_g for g = 1..m with the deployment's drafter
    zero_cost_speedup: tuple[float, ...] | None  #: z_g, if the drafter has a cost
    recommended_gamma: int  #: 0: no speculation
    recommended_drafter: str | None  #: None when speculation should be off
    verdict: str
    reason: str


# --- the numbers --------------------------------------------------------------------------


def conditional_acceptance(per_position: npt.ArrayLike) -> np.ndarray:
    """Conditional acceptance ``a_j = u_j / u_{j-1}`` (``u_0 = 1``): the probability that guess
    j is accepted given guesses 1..j-1 were, from the unconditional per-position rates u_j
    that vLLM reports (each counted over every draft). 0 where ``u_{j-1} = 0`` (never reached).

    >>> conditional_acceptance([0.8, 0.4, 0.0, 0.0]).tolist()
    [0.8, 0.5, 0.0, 0.0]
    """
    u = np.asarray(per_position, dtype=float)
    before = np.concatenate([np.ones(u.shape[:-1] + (1,)), u[..., :-1]], axis=-1)
    return np.where(before > 0, u / np.where(before > 0, before, 1.0), 0.0)


def predicted_speedups(
    per_position: npt.ArrayLike,
    concurrency: int,
    context: int,
    drafter: str,
    hardware: str | None = None,
    target: str | None = None,
    settings: Settings | None = None,
    engine: str = "vllm",
) -> np.ndarray:
    """``s_g`` for g = 1..m: the model's speedup over plain decoding under ``engine`` when the
    first g measured positions are drafted (:func:`specmodel.evaluate_per_position`)."""
    u = np.asarray(per_position, dtype=float)
    return np.array([
        float(evaluate_per_position(u[:g], concurrency, context, drafter, hardware, target, settings=settings,
                                    engine=engine).speedup)
        for g in range(1, u.shape[-1] + 1)
    ])  # fmt: skip


def best_gamma(speedups: npt.ArrayLike) -> int:
    """The gamma (1-based) with the highest speedup, or 0 if none beats plain decoding by
    more than :data:`MIN_GAIN`.

    >>> best_gamma([1.2, 1.5, 1.4]), best_gamma([0.9, 0.8]), best_gamma([1.01, 1.02])
    (2, 0, 0)
    """
    s = np.asarray(speedups, dtype=float)
    g = int(np.argmax(s))
    return g + 1 if s[g] > 1.0 + MIN_GAIN else 0


def clearly_beaten(speedup: float, zero_cost_speedup: float) -> bool:
    """Whether a drafter at ``speedup`` keeps less than :data:`CLEARLY_BEATEN_GAIN_SHARE` of
    the gain a zero-cost drafter reaches: ``s - 1 < share (z - 1)``.

    >>> clearly_beaten(1.9, 2.6), clearly_beaten(1.3, 2.4)
    (False, True)
    """
    return speedup - 1.0 < CLEARLY_BEATEN_GAIN_SHARE * (zero_cost_speedup - 1.0)


def advise(
    per_position: npt.ArrayLike,
    concurrency: int,
    context: int = DEFAULTS["context"],
    deployment: Deployment | None = None,
    hardware: str | None = None,
    target: str | None = None,
    settings: Settings | None = None,
    engine: str = "vllm",
) -> Advice:
    """Apply the module's rule to measured per-position acceptance.

    >>> a = advise([0.75, 0.478, 0.259, 0.119], concurrency=1, deployment=deployment_from_drafter("qwen3-0.6b"),
    ...            engine="ideal")
    >>> a.recommended_gamma, a.verdict
    (3, 'lower-gamma')
    """
    settings = settings or current()
    hardware = hardware or settings.deployment.hardware
    target = target or settings.deployment.target
    deployment = deployment or deployment_from_drafter(settings.deployment.draft, target)
    check_drafter(deployment.drafter, target)
    u = np.asarray(per_position, dtype=float)
    if u.ndim != 1 or u.size < 1:
        raise SpecModelError(f"per-position acceptance must be a list of 1 or more rates; got shape {u.shape}")
    deployed = deployment.gamma if deployment.gamma is not None else u.size
    if deployed != u.size:
        raise SpecModelError(
            f"num_speculative_tokens {deployed} in --speculative-config, but the metrics have {u.size} draft positions"
        )
    s = predicted_speedups(u, concurrency, context, deployment.drafter, hardware, target, settings, engine)
    z = None
    if drafter_kind(deployment.drafter) != "ngram":
        z = predicted_speedups(u, concurrency, context, ZERO_COST_DRAFTER, hardware, target, settings, engine)
    verdict, gamma, drafter = _verdict(s, z, deployed, deployment.drafter)
    reason = _reason(verdict, s, z, deployed, gamma, deployment.drafter, int(concurrency), conditional_acceptance(u))
    return Advice(
        per_position=tuple(float(x) for x in u),
        conditional=tuple(float(x) for x in conditional_acceptance(u)),
        deployment=deployment,
        deployed_gamma=int(deployed),
        concurrency=int(concurrency),
        context=int(context),
        hardware=hardware,
        target=target,
        engine=engine,
        speedup=tuple(float(x) for x in s),
        zero_cost_speedup=None if z is None else tuple(float(x) for x in z),
        recommended_gamma=gamma,
        recommended_drafter=drafter,
        verdict=verdict,
        reason=reason,
    )


def _verdict(s: FloatArray, z: FloatArray | None, deployed: int, drafter: str) -> tuple[str, int, str | None]:
    """(verdict, recommended gamma, recommended drafter) by the module's rule."""
    best = best_gamma(s)
    if z is not None:
        zero_best = best_gamma(z)
        if zero_best and (best == 0 or clearly_beaten(float(s[best - 1]), float(z[zero_best - 1]))):
            return "switch-drafter", zero_best, ZERO_COST_DRAFTER
    if best == 0:
        return "off", 0, None
    return ("keep" if best == deployed else "lower-gamma"), best, drafter


def _reason(
    verdict: str,
    s: FloatArray,
    z: FloatArray | None,
    deployed: int,
    gamma: int,
    drafter: str,
    concurrency: int,
    conditional: FloatArray,
) -> str:
    """One plain sentence with the numbers behind the verdict."""
    at = f"at {concurrency} concurrent sequence{'s' if concurrency != 1 else ''}"
    top = int(np.argmax(s)) + 1
    if verdict == "switch-drafter":
        assert z is not None  # _verdict switches drafters only when it has the zero-cost speedups
        zero = (
            f"a zero-cost drafter (n-gram lookup) with the same acceptance would give "
            f"{_times(z[gamma - 1])} at gamma {gamma}"
        )
        if s[top - 1] <= 1.0 + MIN_GAIN:
            return (
                f"{at}, {drafter} gains nothing worth having at any gamma (best {_times(s[top - 1])} at gamma "
                f"{top}); {zero}"
            )
        return (
            f"{at}, {drafter} gives at best {_times(s[top - 1])} (gamma {top}), while {zero}; the draft model "
            f"keeps only {(s[top - 1] - 1) / (z[gamma - 1] - 1):.0%} of that gain"
        )
    if verdict == "off":
        text = (
            f"{at}, no gamma beats plain decoding by more than {MIN_GAIN:.0%}: the best is {_times(s[top - 1])} "
            f"at gamma {top}"
        )
        if z is not None:
            text += f", and even a zero-cost drafter with this acceptance would reach only {_times(max(z))}"
        return text
    if verdict == "keep":
        text = f"{at}, the deployed gamma {deployed} is the best of 1..{len(s)}: {_times(s[deployed - 1])}"
        if deployed > 1:
            text += f" (gamma {deployed - 1}: {_times(s[deployed - 2])})"
        return text
    return (
        f"{at}, gamma {gamma} gives {_times(s[gamma - 1])} against {_times(s[deployed - 1])} at the deployed gamma "
        f"{deployed}: guesses past position {gamma} are accepted too rarely (conditional acceptance "
        f"{conditional[gamma]:.2f} at position {gamma + 1}) to pay for drafting and verifying them"
    )
