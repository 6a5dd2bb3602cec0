"""Claims of section 6, does it fit: the ladder's scenarios against the memory of the
deployment's GPUs, and what splitting the model over more GPUs changes."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed, phrase
from sitebuild.claims.words import count, first_rung, rung, verdict
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import gib, percent, plain, times
from specmodel.model import constants as declared
from specmodel.model.memory import cards_needed
from specmodel.model.scenario import TENSOR_PARALLEL
from specmodel.model.specs import get_hardware

_LARGE = (
    " From {first_unfit} sequences at a 2,048-token prompt the target and its draft need more than {where}: the "
    "1,024-sequence scenario asks for {hbm_b1024}, {times_usable} times what is usable ({hbm_plain_b1024} without "
    "the draft)"
)
FITS_LADDER = {
    "fits:fits:unfit:unfit": "At one sequence the default scenario needs {hbm_b1}, and at 64 sequences {hbm_b64}: "
    "both fit." + _LARGE + ", and the 64 sequences at 8,192 tokens of section 4 need {hbm_b64_t8192}, too much as "
    "well.",
    "fits:fits:unfit:fits": "At one sequence the default scenario needs {hbm_b1}, and at 64 sequences {hbm_b64}: "
    "both fit." + _LARGE + "; the 64 sequences at 8,192 tokens of section 4 need {hbm_b64_t8192} and fit.",
    "fits:unfit:unfit:unfit": "At one sequence the default scenario needs {hbm_b1} and fits, but at 64 sequences it "
    "needs {hbm_b64}, more than {where} hold." + _LARGE + ", and the 64 sequences at 8,192 tokens of section 4 need "
    "{hbm_b64_t8192}.",
    "unfit:unfit:unfit:unfit": "Even at one sequence the default scenario needs {hbm_b1}, more than {where} hold, "
    "so every rung of the ladder is a scenario this deployment cannot run: 64 sequences need {hbm_b64}, 1,024 need "
    "{hbm_b1024}, and the 64 sequences at 8,192 tokens of section 4 {hbm_b64_t8192}.",
    "fits:fits:fits:fits": "Every rung of the ladder fits: at one sequence the default scenario needs {hbm_b1}, at "
    "64 sequences {hbm_b64}, at 1,024 sequences {hbm_b1024}, and the 64 sequences at 8,192 tokens of section 4 "
    "{hbm_b64_t8192}.",
}


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
        "hbm_b1": gib(d.memory_required_bytes),
        "hbm_b64": gib(b64.memory_required_bytes),
        "hbm_b1024": gib(b1024.memory_required_bytes, 0),
        "hbm_plain_b1024": gib(one(settings, concurrency=1024, drafter="ngram").memory_required_bytes, 0),
        "hbm_b64_t8192": gib(long.memory_required_bytes),
        "times_usable": plain(cards_needed(b1024.memory_required_bytes, d.usable_memory_bytes), 0),
        "first_unfit": rung(first_unfit),
        "where": phrase(_where(settings)),
    }
    word = {True: "fits", False: "unfit"}
    outcome = ":".join(word[bool(x)] for x in (d.fits, b64.fits, b1024.fits, long.fits))
    return claim("fits_ladder", outcome, values, FITS_LADDER)


_TP_LEAD = (
    "Tensor parallelism splits the weights and caches over several GPUs (the page [Beyond one GPU](beyond.md) runs "
    "a 70B model that way)."
)
FITS_MORE_LONG = {
    "fits:slower": _TP_LEAD + " The 64 sequences at 8,192 tokens fit on {tp_long} GPUs, where the draft model "
    "gives {speedup_long}, still a loss: more GPUs solve the memory, not the loss.",
    "fits:even": _TP_LEAD + " The 64 sequences at 8,192 tokens fit on {tp_long} GPUs, where the draft model gives "
    "{speedup_long}, about even.",
    "fits:faster": _TP_LEAD + " The 64 sequences at 8,192 tokens fit on {tp_long} GPUs, where the draft model "
    "gives {speedup_long}.",
    "unfit": _TP_LEAD + " Even {tp_max} GPUs do not hold the 64 sequences at 8,192 tokens with the draft model.",
}
FITS_MORE_BIG = {
    "big_fits": "The 1,024-sequence scenario fits on {tp_big} GPUs with the draft model.",
    "big_unfit:plain_fits:eagle_fits": "The 1,024-sequence scenario does not fit on {tp_max} GPUs with the draft "
    "model, but plain decoding fits on {tp_plain_big}, and so does an EAGLE head, which adds almost no memory, on "
    "{tp_eagle_big}.",
    "big_unfit:plain_fits:eagle_unfit": "The 1,024-sequence scenario does not fit on {tp_max} GPUs with the draft "
    "model or an EAGLE head; plain decoding fits on {tp_plain_big}.",
    "big_unfit:plain_unfit:eagle_unfit": "The 1,024-sequence scenario does not fit on {tp_max} GPUs at all, with "
    "speculation or without.",
}


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
        "speedup_long": times(speedup_long),  # on more GPUs than the simulator's: not linked
        "tp_max": plain(tps[-1], 0),
        "tp_big": rung(first_rung(tps, big.fits)),
        "tp_plain_big": rung(first_rung(tps, big_plain.fits)),
        "tp_eagle_big": rung(first_rung(tps, big_eagle.fits)),
    }
    long_outcome = "unfit" if tp_long is None else f"fits:{verdict(speedup_long)}"
    fit = {True: "fits", False: "unfit"}
    big_outcome = (
        "big_fits"
        if big.fits.any()
        else (f"big_unfit:plain_{fit[bool(big_plain.fits.any())]}:eagle_{fit[bool(big_eagle.fits.any())]}")
    )
    facets = [("long prompts", long_outcome, FITS_MORE_LONG), ("1,024 sequences", big_outcome, FITS_MORE_BIG)]
    return composed("fits_more_gpus", facets, values)


BATCH_ROOM = {
    "room": "It adds {draft_kv_kib} KiB per token to the target's {target_kv_kib} KiB ({draft_kv_of_total} of "
    "the total), so at a 2,048-token prompt the memory holds {max_b_plain} sequences decoding plainly but only "
    "{max_b_draft} with the draft, {max_b_loss} fewer; at 8,192 tokens, {max_b_plain_t8192} against "
    "{max_b_draft_t8192}. An EAGLE head, with its one-layer cache, keeps {max_b_eagle}.",
    "draft_none": "It adds {draft_kv_kib} KiB per token to the target's {target_kv_kib} KiB ({draft_kv_of_total} "
    "of the total): at a 2,048-token prompt the memory holds {max_b_plain} sequences decoding plainly and none "
    "with the draft.",
    "no_room": "It adds {draft_kv_kib} KiB per token to the target's {target_kv_kib} KiB ({draft_kv_of_total} of "
    "the total), though here the memory does not hold even one sequence of a 2,048-token prompt decoding plainly.",
}


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
    return claim("batch_room", outcome, values, BATCH_ROOM)


MEMORY_SHARE = {
    "default": "by default",
    "set": "in this build, against {default} by default",
}


def memory_share(settings: SiteSettings) -> Said:
    """Whether the share of each GPU's memory the server may use (the number
    ``gpu_memory_utilization``, printed before it) is the model's default (vLLM's) or the build's
    configuration set it."""
    share = settings.constants.GPU_MEMORY_UTILIZATION
    values = {"default": percent(declared.GPU_MEMORY_UTILIZATION)}
    return claim("memory_share", "default" if share == declared.GPU_MEMORY_UTILIZATION else "set", values,
                 MEMORY_SHARE)  # fmt: skip


CLAIMS = (memory_share, fits_ladder, fits_more_gpus, batch_room)
