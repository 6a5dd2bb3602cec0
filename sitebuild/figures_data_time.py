"""The numbers behind the figures of where the time goes (the step's time split into its
parts at every rung of the ladder) and of what it buys (each user's token rate against the
server's): tidy DataFrames computed from the model."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sitebuild.claims.serving import HIGH_TARGET_RUNG, LOW_TARGET_RUNG, latency_target
from sitebuild.config import SiteSettings
from specmodel.model.drafters import drafter_label
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import CONCURRENCY_LADDER
from specmodel.model.timing import TIME_PARTS

CONCURRENCY = np.array(CONCURRENCY_LADDER)


def breakdown_cases(settings: SiteSettings) -> tuple[tuple[str, int], ...]:
    """(drafter, context) of each case the breakdown figure offers, the article's first."""
    draft = settings.deployment.draft
    return ((draft, 2048), (draft, 512), (draft, 8192), ("ngram", 2048), ("ngram", 256), ("eagle", 2048))


def time_breakdown(settings: SiteSettings) -> pd.DataFrame:
    """For each case of :func:`breakdown_cases` and each rung: the time per generated token of
    plain decoding and of speculation split into :data:`TIME_PARTS`, as shares of the plain
    step's (``share``) and in seconds (``seconds``), with the speedup and whether it fits."""
    frames = []
    for drafter, context in breakdown_cases(settings):
        ev = evaluate(settings=settings, concurrency=CONCURRENCY, drafter=drafter, context=context)
        plain_total = ev.base_time_parts.sum(axis=-1)
        for mode, parts in (("plain", ev.base_time_parts), ("speculative", ev.spec_time_parts)):
            for k, name in enumerate(TIME_PARTS):
                frames.append(pd.DataFrame({
                    "case": f"{drafter_label(drafter)}, {context:,} tokens",
                    "drafter": drafter,
                    "context": context,
                    "concurrency": CONCURRENCY,
                    "mode": mode,
                    "part": name,
                    "seconds": parts[:, k],
                    "share": parts[:, k] / plain_total,
                    "speedup": ev.speedup,
                    "fits": ev.fits,
                }))  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def latency_throughput(settings: SiteSettings) -> tuple[pd.DataFrame, tuple[float, float]]:
    """Each user's token rate against the server's total at every rung, for plain decoding and
    each drafter of the article's ladder (ideal engine), with whether it fits; and the two
    per-user targets the article reads off (:mod:`sitebuild.claims.serving`)."""
    dep = settings.deployment
    drafters = (dep.draft, dep.big_draft, "ngram", "eagle-32k")
    frames = []
    for i, drafter in enumerate(drafters):
        ev = evaluate(settings=settings, concurrency=CONCURRENCY, drafter=drafter)
        if i == 0:
            plain_fits = evaluate(settings=settings, concurrency=CONCURRENCY, drafter="ngram").fits
            frames.append(pd.DataFrame({"series": "plain decoding", "drafter": "", "concurrency": CONCURRENCY,
                                        "per_user": ev.base_tokens_per_s_per_sequence, "total": ev.base_tokens_per_s,
                                        "fits": plain_fits}))  # fmt: skip
        frames.append(pd.DataFrame({"series": drafter_label(drafter), "drafter": drafter, "concurrency": CONCURRENCY,
                                    "per_user": ev.spec_tokens_per_s_per_sequence, "total": ev.spec_tokens_per_s,
                                    "fits": ev.fits}))  # fmt: skip
    targets = (latency_target(settings, HIGH_TARGET_RUNG), latency_target(settings, LOW_TARGET_RUNG))
    return pd.concat(frames, ignore_index=True), targets
