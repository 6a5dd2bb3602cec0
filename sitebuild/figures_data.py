"""The numbers behind each figure of the article: tidy DataFrames computed from the model.

One function per figure, named like the figure; no drawing here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from sitebuild.config import SiteSettings
from sitebuild.sampling import toy_demo
from specmodel.formatting import GIB, KIB
from specmodel.measurements import Measurement, predict, relative_errors
from specmodel.model import acceptance as acc
from specmodel.model import architecture as arch
from specmodel.model import heads
from specmodel.model.breakeven import first_crossing
from specmodel.model.drafters import drafter_coefficients, drafter_label
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import CONCURRENCY_LADDER, DEFAULTS, ENGINES, GRID_CONTEXTS
from specmodel.model.scenario import GAMMAS as GAMMA_VALUES
from specmodel.model.specs import get_architecture, get_hardware

CONCURRENCY = np.array(CONCURRENCY_LADDER)
CONTEXTS = np.array(GRID_CONTEXTS)
GAMMAS = np.array(GAMMA_VALUES)

#: Heads the site's figures and simulator show next to the draft models and n-gram lookup.
SITE_HEADS = ("eagle", "eagle-32k")
#: Heads the article's section on heads compares (EAGLE-3's own structure is on the validation page).
ARTICLE_HEADS = ("eagle", "eagle-32k", "mtp")

#: Cards the side-by-side ladder compares.
COMPARED_HARDWARE = ("h100-sxm", "h200", "b200")
COMPARED_CONTEXTS = (512, 2048, 8192, 32768)


def site_drafters(settings: SiteSettings) -> tuple[str, ...]:
    """The drafters of the site's figures: the deployment's two draft models, n-gram lookup,
    and the heads of SITE_HEADS."""
    d = settings.deployment
    return (d.draft, d.big_draft, "ngram", *SITE_HEADS)


def model_drafters(settings: SiteSettings) -> tuple[str, str]:
    """The deployment's two draft models."""
    return settings.deployment.draft, settings.deployment.big_draft


def _frame(ev: Evaluation, **columns: ArrayLike) -> pd.DataFrame:
    shape = np.shape(ev.speedup)
    out = {k: np.broadcast_to(v, shape).ravel() for k, v in columns.items()}
    return pd.DataFrame(out)


def ladder(settings: SiteSettings) -> pd.DataFrame:
    """Speedup and throughputs vs concurrency, for every drafter and context (defaults otherwise)."""
    return _ladder_frame(settings, None)


def _ladder_frame(
    settings: SiteSettings,
    hardware: str | None,
    contexts: ArrayLike = CONTEXTS,
    drafters: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    batch, t, d = np.meshgrid(
        CONCURRENCY, np.asarray(contexts), np.array(drafters or site_drafters(settings)), indexing="ij"
    )
    ev = evaluate(settings=settings, concurrency=batch, context=t, drafter=d, hardware=hardware)
    return _frame(
        ev,
        concurrency=batch,
        context=t,
        drafter=d,
        speedup=ev.speedup,
        spec_tokens_per_s=ev.spec_tokens_per_s,
        base_tokens_per_s=ev.base_tokens_per_s,
        fits=ev.fits,
        memory_gib=ev.memory_required_bytes / GIB,
        usable_gib=ev.usable_memory_bytes / GIB,
    )


def hardware_ladders(settings: SiteSettings) -> pd.DataFrame:
    """The ladder (speedup vs concurrency) on each card of COMPARED_HARDWARE for the draft
    model, n-gram lookup and the 32k-vocabulary EAGLE head at four contexts, with whether
    each scenario fits on the card."""
    frames = []
    for key in COMPARED_HARDWARE:
        frame = _ladder_frame(settings, key, COMPARED_CONTEXTS, (settings.deployment.draft, "ngram", "eagle-32k"))
        frame.insert(0, "hardware", key)
        hw = get_hardware(key)
        frame.insert(1, "hardware_name", f"{key.upper()}, {hw.memory_capacity.value / 1e9:.0f} GB")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def roofline(settings: SiteSettings) -> pd.DataFrame:
    """The full-batch verify pass vs concurrency at the defaults: memory time, arithmetic
    time (seconds) and the tensor cores' idle share."""
    batch = np.unique(np.concatenate([CONCURRENCY, np.round(np.geomspace(1, 1024, 61))])).astype(int)
    ev = evaluate(settings=settings, concurrency=batch)
    return _frame(
        ev,
        concurrency=batch,
        memory_time=ev.verify_memory_time,
        compute_time=ev.verify_compute_time,
        idle=ev.verify_idle,
    )


def arithmetic_bill(settings: SiteSettings) -> pd.DataFrame:
    """Arithmetic per output token (speculative / plain) vs gamma: simulated for three
    drafter/profile pairs, and Leviathan et al.'s Theorem 3.11 for c = 0 and for the 0.6B draft."""
    rows = []
    draft = settings.deployment.draft
    cases = [(draft, "falling"), (draft, "same"), ("ngram", "same")]
    for drafter, profile in cases:
        ev = evaluate(settings=settings, gamma=GAMMAS, drafter=drafter, acceptance=profile)
        rows.append(
            pd.DataFrame(
                {
                    "gamma": GAMMAS,
                    "series": f"simulated: {drafter_label(drafter)}, {profile}",
                    "drafter": drafter,
                    "profile": profile,
                    "kind": "simulated",
                    "ratio": ev.arithmetic_ratio,
                }
            )
        )
    target, draft_arch = get_architecture(settings.deployment.target), get_architecture(draft)
    c_draft = arch.draft_cost_ratio(draft_arch, target, settings.constants.FLOPS_PER_PARAMETER)
    for c, label, drafter in (
        (0.0, "Theorem 3.11, c = 0", "ngram"),
        (c_draft, f"Theorem 3.11, c = {c_draft:.3f}", draft),
    ):
        rows.append(
            pd.DataFrame(
                {
                    "gamma": GAMMAS,
                    "series": label,
                    "drafter": drafter,
                    "profile": "same",  # the theorem's assumption: one alpha at every position
                    "kind": "theorem",
                    "ratio": acc.theorem_3_11_arithmetic_increase(DEFAULTS["alpha"], GAMMAS, c),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def alpha_sweep(settings: SiteSettings) -> tuple[pd.DataFrame, dict[str, float]]:
    """Speedup vs alpha at one sequence for the two draft models, and each one's break-even
    alpha (where speedup crosses 1, linearly interpolated on a 0.005 grid)."""
    alphas = np.round(np.arange(0.02, 0.9951, 0.005), 3)
    a, d = np.meshgrid(alphas, np.array(model_drafters(settings)), indexing="ij")
    ev = evaluate(settings=settings, alpha=a, drafter=d)
    frame = _frame(ev, alpha=a, drafter=d, speedup=ev.speedup)
    breakeven = {
        str(drafter): first_crossing(group["alpha"].to_numpy(), group["speedup"].to_numpy())
        for drafter, group in frame.groupby("drafter", sort=False)
    }
    return frame, breakeven


def memory_footprint(settings: SiteSettings) -> pd.DataFrame:
    """Weights (GiB) and KV cache per token (KiB) of the target and the two draft models."""
    keys = (settings.deployment.target, *model_drafters(settings))
    models = [get_architecture(k) for k in keys]
    return pd.DataFrame(
        {
            "model": [m.name for m in models],
            "weights_gib": [arch.weight_bytes(m) / GIB for m in models],
            "kv_kib_per_token": [arch.kv_cache_bytes_per_token(m) / KIB for m in models],
            "parameters": [arch.parameter_count(m) for m in models],
        }
    )


def context_sweep(settings: SiteSettings, concurrency: int = 64) -> pd.DataFrame:
    """Draft share of wall clock and speedup vs context at 64 sequences, every drafter."""
    t, d = np.meshgrid(CONTEXTS, np.array(site_drafters(settings)), indexing="ij")
    ev = evaluate(settings=settings, concurrency=concurrency, context=t, drafter=d)
    return _frame(ev, context=t, drafter=d, speedup=ev.speedup, draft_share=ev.draft_share, fits=ev.fits)


def gamma_sweep(settings: SiteSettings) -> pd.DataFrame:
    """Speedup vs gamma at every concurrency (0.6B draft, falling, alpha 0.75, context 2048)."""
    g, batch = np.meshgrid(GAMMAS, CONCURRENCY, indexing="ij")
    ev = evaluate(settings=settings, gamma=g, concurrency=batch)
    return _frame(ev, gamma=g, concurrency=batch, speedup=ev.speedup)


TOKEN_ALPHAS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.9)


def tokens_per_iteration() -> pd.DataFrame:
    """Expected tokens per iteration vs gamma (i.i.d. closed form) for several alpha, with
    each alpha's ceiling 1 / (1 - alpha)."""
    g, a = np.meshgrid(np.arange(1, 21), np.array(TOKEN_ALPHAS), indexing="ij")
    tokens = acc.closed_form_tokens_per_iteration(a, g)
    return pd.DataFrame(
        {"gamma": g.ravel(), "alpha": a.ravel(), "tokens": tokens.ravel(), "ceiling": (1 / (1 - a)).ravel()}
    )


def per_position(settings: SiteSettings, gamma: int = 6) -> pd.DataFrame:
    """Unconditional acceptance of each draft position, falling vs same (alpha 0.75)."""
    rows = []
    for profile in ("falling", "same"):
        ev = evaluate(settings=settings, gamma=gamma, acceptance=profile)
        rows.append(
            pd.DataFrame(
                {"position": np.arange(1, gamma + 1), "profile": profile, "acceptance": np.ravel(ev.per_position)}
            )
        )
    return pd.concat(rows, ignore_index=True)


def breakeven_map(settings: SiteSettings) -> pd.DataFrame:
    """For every drafter, concurrency and context: the best gamma (1..10) and its speedup."""
    batch, t, d, g = np.meshgrid(CONCURRENCY, CONTEXTS, np.array(site_drafters(settings)), GAMMAS, indexing="ij")
    ev = evaluate(settings=settings, concurrency=batch, context=t, drafter=d, gamma=g)
    best = np.argmax(ev.speedup, axis=-1)
    speedup = np.take_along_axis(ev.speedup, best[..., None], axis=-1)[..., 0]
    return pd.DataFrame(
        {
            "concurrency": batch[..., 0].ravel(),
            "context": t[..., 0].ravel(),
            "drafter": d[..., 0].ravel(),
            "best_gamma": GAMMAS[best].ravel(),
            "speedup": speedup.ravel(),
            "fits": ev.fits[..., 0].ravel(),
        }
    )


def head_costs(settings: SiteSettings, concurrency: int = 64) -> pd.DataFrame:
    """What one draft step costs for each head and the deployment's draft model: weights read
    (of which the LM head), the head's cache per token, the bytes of a full-batch draft pass at
    1 and at ``concurrency`` sequences, and the speedup there (defaults otherwise)."""
    t = get_architecture(settings.deployment.target)
    fpp = settings.constants.FLOPS_PER_PARAMETER
    rows = []
    for name in (settings.deployment.draft, *ARTICLE_HEADS):
        one, many = (
            evaluate(settings=settings, drafter=name),
            evaluate(settings=settings, drafter=name, concurrency=concurrency),
        )
        if name in heads.head_catalog():
            head = heads.head_catalog()[name]
            lm = heads.lm_head_bytes_per_step(head, t)
            vocab = heads.draft_vocabulary(head, t)
        else:
            lm = arch.lm_head_bytes(get_architecture(name))
            vocab = get_architecture(name).vocab_size
        rows.append(
            {
                "drafter": name,
                "vocabulary": vocab,
                "weights_read_gib": float(one.draft_weight_bytes) / GIB,
                "lm_head_gib": lm / GIB,
                "lm_head_share": lm / float(one.draft_weight_bytes),
                "kv_kib_per_token": float(one.draft_kv_bytes_per_token) / KIB,
                "resident_gib": drafter_coefficients(name, t.key, fpp).resident_bytes / GIB,
                "step_gib_b1": float(one.draft_step_bytes) / GIB,
                "step_gib_bn": float(many.draft_step_bytes) / GIB,
                "speedup_b1": float(one.speedup),
                "speedup_bn": float(many.speedup),
            }
        )
    return pd.DataFrame(rows)


SAMPLING_SEED, SAMPLING_TRIALS = 0, 200_000


def sampling() -> pd.DataFrame:
    """Algorithm 1 run for real on a toy vocabulary (one guess, seeded): the target's p, the
    draft's q, the residual norm(max(0, p - q)) and the empirical distribution of the
    emitted token."""
    demo = toy_demo(seed=SAMPLING_SEED, trials=SAMPLING_TRIALS)
    return pd.DataFrame(
        {"token": demo.labels, "p": demo.p, "q": demo.q, "residual": demo.residual, "output": demo.output}
    )


def validation(settings: SiteSettings, rows: list[Measurement]) -> pd.DataFrame:
    """Every public measurement against the model's prediction under each engine, with the
    acceptance the run measured given to the model."""
    frame = pd.DataFrame({
        "source": [r.source for r in rows],
        "url": [r.source_url or "" for r in rows],
        "method": [r.method for r in rows],
        "batch": [r.batch for r in rows],
        "gamma": [r.num_speculative_tokens for r in rows],
        "prompt_tokens": [r.prompt_tokens for r in rows],
        "output_tokens": [r.output_tokens for r in rows],
        "mean_acceptance_length": [r.mean_acceptance_length for r in rows],
        "measured": [r.measured_speedup for r in rows],
    })  # fmt: skip
    for engine in ENGINES:
        frame[engine] = predict(rows, engine, settings)
        frame[f"{engine}_error"] = relative_errors(frame[engine].to_numpy(), rows)
    return frame


def engine_ladder(settings: SiteSettings, drafters: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The default scenario's speedup against concurrency under each engine (its own
    batching), for the deployment's draft model and n-gram lookup."""
    drafters = drafters or (settings.deployment.draft, "ngram")
    batch, d, e = np.meshgrid(CONCURRENCY, np.array(drafters), np.array(ENGINES), indexing="ij")
    ev = evaluate(settings=settings, concurrency=batch, drafter=d, engine=e)
    return _frame(ev, concurrency=batch, drafter=d, engine=e, speedup=ev.speedup, fits=ev.fits)
