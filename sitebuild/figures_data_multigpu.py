"""The numbers behind the figures of the page "Beyond one GPU" and of the four-GPU
validation: tidy DataFrames computed from the model (tensor parallelism, trees of guesses,
mixtures of experts) and from the public measurements of vLLM on four H100s, whose
acceptance is fitted at batch 1 (:mod:`specmodel.acceptance_fit`).

One function per figure, named like the figure; no drawing here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from sitebuild.config import SiteSettings
from sitebuild.memo import Keyed
from specmodel.acceptance_fit import FittedSeries, fit_series
from specmodel.formatting import GIB
from specmodel.measurements import MULTIGPU_MEASUREMENTS_FILE, load_measurements
from specmodel.model import experts
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import CONCURRENCY_LADDER, DEFAULTS, ENGINES
from specmodel.model.specs import get_architecture, get_hardware

CONCURRENCY = np.array(CONCURRENCY_LADDER)

#: The measured deployment: Llama-3-70B on four H100s (SpecDecode-Bench, arXiv:2601.11580).
BIG_TARGET, BIG_HARDWARE, BIG_TP = "llama-3-70b", "h100-sxm", 4
#: The engine the page prices real deployments with (fitted to measurements of vLLM).
ENGINE = "vllm"
#: The measured workload the page's comparisons of cards use (longer prompts and outputs).
WORKLOAD = "ShareGPT"
#: Deployments of the measured model the page compares: (hardware, tensor-parallel degree).
DEPLOYMENTS = (("h100-sxm", 4), ("mi300x", 4), ("mi300x", 2))

#: Chain against trees, drafted by an EAGLE head on the measured deployment: (key, label,
#: candidates per depth K, positions verified V), all five steps deep (SGLang's options).
TREE_DRAFTER, TREE_STEPS = "eagle", 5
TREES = (
    ("chain", "chain, 6 positions", 1, 6),
    ("sglang", "tree 4 wide, 8 positions (SGLang's default)", 4, 8),
    ("wide", "tree 8 wide, 41 positions", 8, 41),
)

#: Mixture of experts against a dense model of about the same weights, on two H100s.
MOE_TARGET, DENSE_TARGET, MOE_HARDWARE, MOE_TP = "qwen3-30b-a3b", "qwen3-32b", "h100-sxm", 2
#: The draft model of the MoE comparison (it shares the Qwen3 vocabulary of both targets).
MOE_DRAFT = "qwen3-0.6b"
#: The batches whose plain and verify passes the weights figure marks.
MOE_MARKED_BATCHES = (1, 64)
#: Token positions of one pass for the weights curve (1 to 1,024).
PASS_TOKENS = np.unique(np.round(np.geomspace(1, 1024, 41)).astype(int))


#: The drafters of the MoE comparison: n-gram lookup, the EAGLE head and a small draft model.
MOE_DRAFTERS = ("ngram", "eagle", MOE_DRAFT)


def fitted(settings: SiteSettings, engine: str = ENGINE) -> list[FittedSeries]:
    """Every series of the four-GPU measurements with its mean acceptance length fitted at
    batch 1 under ``engine`` (computed once per settings and engine: fitting takes seconds under
    the ideal engine, whose cohort is simulated for every candidate acceptance, and the figures,
    tables and numbers of one build all need the same fits)."""
    return _fitted(engine, Keyed(settings.model_dump_json(), settings))


@cache
def _fitted(engine: str, settings: Keyed[SiteSettings]) -> list[FittedSeries]:
    """:func:`fitted`, memoised by the engine and the settings' JSON."""
    return fit_series(load_measurements(MULTIGPU_MEASUREMENTS_FILE), engine, settings.value)


@dataclass(frozen=True)
class Series:
    """A measured series as the page uses it: its dataset, drafter, fitted mean acceptance
    length and the scenario it measured (the fitted acceptance in it)."""

    dataset: str
    drafter: str
    mean_acceptance_length: float
    fields: dict


def series(settings: SiteSettings, engine: str = ENGINE) -> list[Series]:
    """The measured series with their fitted acceptance, in the file's order."""
    out = []
    for fit in fitted(settings, engine):
        row, length = fit.rows[0], fit.mean_acceptance_length
        out.append(Series(row.dataset, row.method, length, row.scenario(length)))
    return out


def workload_series(settings: SiteSettings, name: str = WORKLOAD) -> dict[str, Series]:
    """Drafter -> its series of the workload ``name``."""
    return {s.drafter: s for s in series(settings) if s.dataset == name}


def evaluate_series(settings: SiteSettings, s: Series, **override: Any) -> Evaluation:
    """The model for a measured series' scenario (fitted acceptance, vLLM engine), with
    ``override`` (the ladder of concurrencies by default)."""
    fields = {**s.fields, "concurrency": CONCURRENCY, **override}
    return evaluate(**fields, engine=ENGINE, settings=settings)


def _ladder_columns(ev: Evaluation) -> dict:
    return {
        "concurrency": CONCURRENCY,
        "speedup": ev.speedup,
        "spec_tokens_per_s": ev.spec_tokens_per_s,
        "base_tokens_per_s": ev.base_tokens_per_s,
        "fits": ev.fits,
        "memory_gib": ev.memory_required_bytes / GIB,
        "usable_gib": ev.usable_memory_bytes / GIB,
    }


def deployment_name(hardware: str, gpus: int) -> str:
    """A panel's title: ``4 x H100-SXM, 80 GB``."""
    return f"{gpus} × {hardware.upper()}, {get_hardware(hardware).memory_capacity.value / 1e9:.0f} GB"


def measured_ladders(settings: SiteSettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The model's ladder for every measured series (its fitted acceptance, the vLLM engine,
    four H100s), one panel per dataset; and the measured points with the model's prediction
    of each (batch 1: where the acceptance was fitted)."""
    curves, points = [], []
    for s, fit in zip(series(settings), fitted(settings)):
        ev = evaluate_series(settings, s)
        frame = pd.DataFrame(_ladder_columns(ev))
        frame.insert(0, "panel", f"{s.dataset} ({s.fields['context']} + {s.fields['generated_tokens']} tokens)")
        frame.insert(1, "drafter", s.drafter)
        frame["gpus"] = BIG_TP
        curves.append(frame)
        points.append(
            pd.DataFrame(
                {
                    "panel": frame["panel"].iloc[0],
                    "drafter": s.drafter,
                    "batch": [r.batch for r in fit.rows],
                    "measured": [r.measured_speedup for r in fit.rows],
                    "predicted": fit.predicted,
                    "fitted": [i == 0 for i in range(len(fit.rows))],
                }
            )  # fmt: skip
        )
    return pd.concat(curves, ignore_index=True), pd.concat(points, ignore_index=True)


def card_ladders(settings: SiteSettings) -> pd.DataFrame:
    """The measured model and workload (WORKLOAD, each drafter's fitted acceptance) on each
    deployment of DEPLOYMENTS, one panel each, with whether it fits."""
    frames = []
    for hardware, gpus in DEPLOYMENTS:
        for drafter, s in workload_series(settings).items():
            ev = evaluate_series(settings, s, hardware=hardware, tensor_parallel=gpus)
            frame = pd.DataFrame(_ladder_columns(ev))
            frame.insert(0, "panel", deployment_name(hardware, gpus))
            frame.insert(1, "drafter", drafter)
            frame["gpus"] = gpus
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def tree_ladder(settings: SiteSettings) -> pd.DataFrame:
    """Speedup against concurrency of a chain and two trees (TREES) drafted by an EAGLE head
    on the measured deployment, under the vLLM engine, at the article's acceptance profile."""
    frames = []
    for key, label, topk, verify in TREES:
        ev = evaluate(
            settings=settings, target=BIG_TARGET, hardware=BIG_HARDWARE, tensor_parallel=BIG_TP, engine=ENGINE,
            drafter=TREE_DRAFTER, gamma=TREE_STEPS, tree_topk=topk, verify_tokens=verify, concurrency=CONCURRENCY,
        )  # fmt: skip
        frames.append(
            pd.DataFrame(
                {
                    "shape": key,
                    "label": label,
                    "verify_tokens": verify,
                    "concurrency": CONCURRENCY,
                    "speedup": ev.speedup,
                    "fits": ev.fits,
                    "mean_acceptance_length": ev.mean_acceptance_length,
                    "arithmetic_ratio": ev.arithmetic_ratio,
                }
            )  # fmt: skip
        )
    return pd.concat(frames, ignore_index=True)


def moe_pass(settings: SiteSettings, target: str, **fields: Any) -> Evaluation:
    """A scenario on the MoE comparison's deployment (MOE_HARDWARE, MOE_TP GPUs, the vLLM engine)."""
    return evaluate(
        settings=settings, target=target, hardware=MOE_HARDWARE, tensor_parallel=MOE_TP, engine=ENGINE, **fields
    )


def moe_weights(settings: SiteSettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Weights one pass reads (all GPUs, GiB) against the token positions in it, for the MoE
    and the dense target (a plain step over that many sequences), with the MoE's expected
    distinct experts per layer; and the marked passes: the plain step and the verify pass
    (gamma + 1 positions per sequence, drafted by MOE_DRAFT) at MOE_MARKED_BATCHES."""
    curves, marks = [], []
    for target in (MOE_TARGET, DENSE_TARGET):
        arch = get_architecture(target)
        name, e, k = arch.name, arch.num_experts, arch.num_experts_per_tok  # E and k: both, or neither (dense)
        plain = moe_pass(settings, target, drafter="ngram", concurrency=PASS_TOKENS)
        distinct = (
            np.zeros(len(PASS_TOKENS))
            if e is None or k is None
            else experts.expected_distinct_experts(PASS_TOKENS, e, k)
        )
        curves.append(
            pd.DataFrame(
                {
                    "model": name,
                    "tokens": PASS_TOKENS,
                    "weights_gib": plain.plain_weights_read_bytes / GIB,
                    "distinct_experts": distinct,
                    "experts": 0 if e is None else e,
                }
            )  # fmt: skip
        )
        batches = np.array(MOE_MARKED_BATCHES)
        ev = moe_pass(settings, target, drafter=MOE_DRAFT, concurrency=batches)
        gamma = int(DEFAULTS["gamma"])
        for kind, tokens, read in (
            ("plain step", batches, ev.plain_weights_read_bytes),
            ("verify pass", batches * (gamma + 1), ev.verify_weights_read_bytes),
        ):
            marks.append(pd.DataFrame({"model": name, "kind": kind, "batch": batches, "tokens": tokens,
                                       "weights_gib": read / GIB}))  # fmt: skip
    return pd.concat(curves, ignore_index=True), pd.concat(marks, ignore_index=True)


def moe_ladders(settings: SiteSettings) -> pd.DataFrame:
    """Speedup against concurrency on the MoE and the dense target (one panel each) for
    each drafter of MOE_DRAFTERS, under the vLLM engine, at the article's acceptance."""
    frames = []
    for target in (MOE_TARGET, DENSE_TARGET):
        for drafter in MOE_DRAFTERS:
            ev = moe_pass(settings, target, drafter=drafter, concurrency=CONCURRENCY)
            frame = pd.DataFrame(_ladder_columns(ev))
            frame.insert(0, "panel", f"{get_architecture(target).name}, {MOE_TP} GPUs")
            frame.insert(1, "drafter", drafter)
            frame["gpus"] = MOE_TP
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def multigpu_validation(settings: SiteSettings) -> pd.DataFrame:
    """Every four-GPU measurement against the model under each engine, the acceptance of its
    series fitted at batch 1 under that engine (``fitted``: the row it was fitted on)."""
    rows = []
    for engine in ENGINES:
        for fit in fitted(settings, engine):
            for i, row in enumerate(fit.rows):
                rows.append({
                    "engine": engine, "dataset": row.dataset, "method": row.method, "batch": row.batch,
                    "gamma": row.num_speculative_tokens, "prompt_tokens": row.prompt_tokens,
                    "output_tokens": row.output_tokens, "measured": row.measured_speedup,
                    "predicted": float(fit.predicted[i]), "mean_acceptance_length": fit.mean_acceptance_length,
                    "fitted": i == 0, "source": row.source, "url": row.source_url or "",
                })  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["error"] = frame["predicted"] / frame["measured"] - 1.0
    return frame
