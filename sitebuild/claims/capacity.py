"""Claims of section 6, does it fit: the ladder's scenarios against the memory of the
deployment's GPUs, and what splitting the model over more GPUs changes."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed, phrase
from sitebuild.claims.words import count, first_rung, rung, verdict
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import percent, plain
from specmodel.model import constants as declared
from specmodel.model.memory import cards_needed
from specmodel.model.scenario import TENSOR_PARALLEL
from specmodel.model.specs import get_hardware


def _where(settings: SiteSettings) -> str:
    gpus = settings.deployment.tensor_parallel or 1
    card = get_hardware(settings.deployment.hardware).name
    return f"one {card}" if gpus == 1 else f"{count(gpus)} {card} GPUs"


def fits_ladder(settings: SiteSettings) -> Said:
    """Which of the article's scenarios fit in the usable memory of the deployment's GPUs."""
    d, b64, b1024 = one(settings), one(settings, concurrency=64), one(settings, concurrency=1024)
    long = one(settings, concurrency=64, context=8192)
    ladder = one(settings, concurrency=LADDER)
    first_unfit = first_rung(LADDER, ~np.asarray(ladder.fits))
    values = {
        "times_usable": plain(cards_needed(b1024.memory_required_bytes, d.usable_memory_bytes), 0),
        "first_unfit": rung(first_unfit),
        "where": phrase(_where(settings)),
    }
    word = {True: "fits", False: "unfit"}
    outcome = ":".join(word[bool(x)] for x in (d.fits, b64.fits, b1024.fits, long.fits))
    return claim("fits_ladder", outcome, values)


def _without_draft(tps: np.ndarray, plain_fits: np.ndarray, eagle_fits: np.ndarray) -> str:
    """Whether plain decoding fits on some group of ``tps`` GPUs and, if so, whether an EAGLE
    head fits on as few (``eagle_same``), only on more (``eagle_more``) or on none
    (``eagle_unfit``): ``plain_fits:eagle_same`` and so on."""
    plain_tp, eagle_tp = first_rung(tps, plain_fits), first_rung(tps, eagle_fits)
    if plain_tp is None:
        return f"plain_unfit:eagle_{'unfit' if eagle_tp is None else 'fits'}"
    eagle = "unfit" if eagle_tp is None else "same" if eagle_tp == plain_tp else "more"
    return f"plain_fits:eagle_{eagle}"


def fits_more_gpus(settings: SiteSettings) -> Said:
    """The two large scenarios split over 1, 2, 4 or 8 GPUs: the fewest that hold each."""
    tps = np.array(TENSOR_PARALLEL)
    long = one(settings, tensor_parallel=tps, concurrency=64, context=8192)
    big = one(settings, tensor_parallel=tps, concurrency=1024)
    big_plain = one(settings, tensor_parallel=tps, concurrency=1024, drafter="ngram")
    big_eagle = one(settings, tensor_parallel=tps, concurrency=1024, drafter="eagle")
    tp_long = first_rung(tps, long.fits)
    at_long = int(np.argmax(long.fits)) if tp_long is not None else len(tps) - 1
    speedup_long = long.speedup[at_long]
    values = {
        "tp_long": rung(tp_long),
        "tp_max": plain(tps[-1], 0),
        "tp_big": rung(first_rung(tps, big.fits)),
        "tp_plain_big": rung(first_rung(tps, big_plain.fits)),
        "tp_eagle_big": rung(first_rung(tps, big_eagle.fits)),
    }
    long_outcome = "unfit" if tp_long is None else f"fits:{verdict(speedup_long)}"
    big_outcome = "big_fits" if big.fits.any() else f"big_unfit:{_without_draft(tps, big_plain.fits, big_eagle.fits)}"
    facets = [("long_prompts", long_outcome), ("1_024_sequences", big_outcome)]
    return composed("fits_more_gpus", facets, values)


def batch_room(settings: SiteSettings) -> Said:
    """The most sequences that fit with and without the draft, at 2,048 and 8,192 tokens."""
    d, long = one(settings), one(settings, context=8192)
    draft_kv, target_kv = float(d.draft_kv_bytes_per_token), float(d.target_kv_bytes_per_token)
    b_draft, b_plain = int(d.max_concurrency), int(d.max_concurrency_without_draft)
    values = {
        "draft_kv_kib": plain(draft_kv / 1024, 0),
        "target_kv_kib": plain(target_kv / 1024, 0),
        "draft_kv_of_total": percent(draft_kv / (draft_kv + target_kv)),
        "max_b_plain": plain(b_plain, 0),
        "max_b_draft": plain(b_draft, 0),
        "max_b_loss": percent(1 - b_draft / b_plain) if b_plain else plain(0, 0),
        "max_b_plain_t8192": plain(long.max_concurrency_without_draft, 0),
        "max_b_draft_t8192": plain(long.max_concurrency, 0),
        "max_b_eagle": plain(one(settings, drafter="eagle").max_concurrency, 0),
    }
    outcome = "room" if b_draft > 0 else "draft_none" if b_plain > 0 else "no_room"
    return claim("batch_room", outcome, values)


def memory_share(settings: SiteSettings) -> Said:
    """Whether the share of each GPU's memory the server may use (the number
    ``gpu_memory_utilization``, printed before it) is the model's default (vLLM's) or the build's
    configuration set it."""
    share = settings.constants.GPU_MEMORY_UTILIZATION
    values = {"default": percent(declared.GPU_MEMORY_UTILIZATION)}
    return claim("memory_share", "default" if share == declared.GPU_MEMORY_UTILIZATION else "set", values)  # fmt: skip


CLAIMS = (memory_share, fits_ladder, fits_more_gpus, batch_room)
