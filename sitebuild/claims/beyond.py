"""Claims of the page "Beyond one GPU": Llama-3-70B on four H100s against its measurements,
the MI300X, trees against a chain, and a mixture of experts against a dense model. The
scenarios are those of :mod:`sitebuild.figures.beyond`."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed, phrase
from sitebuild.claims.words import first_rung, rung, slower
from sitebuild.config import SiteSettings
from sitebuild.figures import beyond as multi
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import Number, name, percent, plain, times
from sitebuild.numbers.text import gib as gib_number
from specmodel.acceptance_fit import held_out_errors
from specmodel.formatting import gib
from specmodel.measurements import error_summary
from specmodel.model import experts
from specmodel.model.evaluation import Evaluation
from specmodel.model.specs import get_architecture

#: The held-out error the four-GPU predictions are held to (the validation page's target).
MULTIGPU_MEDIAN_TARGET = 0.08


def b70_predictions(settings: SiteSettings) -> Said:
    """The vllm profile's held-out error on the four-GPU rows against its target."""
    errors = held_out_errors(multi.fitted(settings, multi.ENGINE))
    summary = error_summary(errors)
    values = {"held_out": plain(len(errors), 0), "median": percent(summary["median"], 1),
              "worst": percent(summary["max"], 1)}  # fmt: skip
    return claim("b70_predictions", "hold" if summary["median"] <= MULTIGPU_MEDIAN_TARGET else "miss", values)


#: The tensor-parallel groups of H100s the page considers for Llama-3-70B.
B70_GROUPS = (1, 2, 4, 8)


def b70_gpus(settings: SiteSettings) -> Said:
    """How many H100s Llama-3-70B with its 1B draft needs at one sequence: the memory it needs
    per GPU on one, two and four, against what one H100 may use; the smallest group that holds it."""
    draft = multi.workload_series(settings)["llama-3.2-1b"]
    groups = np.array(B70_GROUPS)
    ev = multi.evaluate_series(settings, draft, concurrency=1, tensor_parallel=groups)
    need = np.asarray(ev.memory_required_bytes, dtype=float)
    fits = np.asarray(ev.fits, dtype=bool)
    values = {f"hbm_tp{g}": gib_number(float(need[i])) for i, g in enumerate(B70_GROUPS) if g <= 4}
    values["usable"] = gib_number(float(np.asarray(ev.usable_memory_bytes)[0]))
    smallest = int(groups[np.argmax(fits)]) if fits.any() else None
    values["smallest"] = plain(smallest or 0, 0)
    outcome = {1: "one", 2: "two", 4: "four", 8: "eight"}.get(smallest or 0, "none")
    return claim("b70_gpus", outcome, values)


def b70_ladder(settings: SiteSettings) -> Said:
    """Where each measured drafter starts to lose on the model's ladder, and the 1B draft
    against the article's draft at 64 sequences."""
    series = multi.workload_series(settings)
    stops = {key: first_rung(LADDER, slower(multi.evaluate_series(settings, series[d]).speedup))
             for key, d in (("ngram", "ngram"), ("eagle", "eagle"), ("draft", "llama-3.2-1b"))}  # fmt: skip
    draft = multi.evaluate_series(settings, series["llama-3.2-1b"], concurrency=64, tensor_parallel=multi.BIG_TP)
    article = one(settings, concurrency=64)
    dep = settings.deployment
    values = {
        **{f"{k}_stop": rung(v) for k, v in stops.items()},
        "article_draft": name(get_architecture(dep.draft).name),
        "article_target": name(get_architecture(dep.target).name),
        "b70_draft_b64": times(draft.speedup),
        "article_b64": times(article.speedup),
        "kv_share": percent(float(draft.draft_kv_bytes_per_token / draft.target_kv_bytes_per_token)),
    }
    facets = [("losses", "any"), *((f"{k}_loses", "never" if v is None else "stops") for k, v in stops.items()),
              ("draft", "better" if float(draft.speedup) > float(article.speedup) else "worse")]  # fmt: skip
    return composed("b70_ladder", facets, values)


def _mi300x_eagle(settings: SiteSettings, hardware: str, gpus: int) -> Evaluation:
    eagle = multi.workload_series(settings)["eagle"]
    return multi.evaluate_series(settings, eagle, concurrency=np.array([1, 64]), hardware=hardware,
                                 tensor_parallel=gpus)  # fmt: skip


def mi300x_links(settings: SiteSettings) -> Said:
    """The all-reduce share of the verify pass on four MI300X against four H100s."""
    h4, m4 = _mi300x_eagle(settings, "h100-sxm", 4), _mi300x_eagle(settings, "mi300x", 4)
    higher = bool(np.all(m4.verify_communication_share > h4.verify_communication_share))
    return claim("mi300x_links", "higher" if higher else "lower", {})


def b70_fits(settings: SiteSettings) -> Said:
    """From how many sequences the ShareGPT workload with the draft model no longer fits on four GPUs."""
    draft = multi.workload_series(settings)["llama-3.2-1b"]
    unfit = ~np.asarray(multi.evaluate_series(settings, draft).fits, dtype=bool)
    first = first_rung(LADDER, unfit)
    outcome = "always" if first is None else "never" if first == LADDER[0] else "from"
    return claim("b70_fits", outcome, {"first_unfit": rung(first)})


#: The deployments whose room the MI300X sentence compares: value name -> (hardware, GPUs).
ROOM = {"b_one": ("mi300x", 1), "b_two": ("mi300x", 2), "b_four": ("mi300x", 4), "b_h100": ("h100-sxm", 4)}


def _room(b: float) -> Number:
    """The sequences a deployment has room for; ``none`` rather than a 0 where not one fits."""
    return plain(b, 0) if b > 0 else phrase("none")


def mi300x_memory(settings: SiteSettings) -> Said:
    """How many ShareGPT sequences the 70B model and its draft leave room for on one, two and
    four MI300X and on four H100s, and whether one MI300X holds them at all."""
    draft = multi.workload_series(settings)["llama-3.2-1b"]
    room = {k: multi.evaluate_series(settings, draft, concurrency=1, hardware=h, tensor_parallel=g)
            for k, (h, g) in ROOM.items()}  # fmt: skip
    counts = {k: float(e.max_concurrency) for k, e in room.items()}
    values = {k: _room(b) for k, b in counts.items()}
    values["hbm_b1"] = gib_number(float(room["b_one"].memory_required_bytes))
    values["usable"] = gib_number(float(room["b_one"].usable_memory_bytes))
    others = [counts[k] > 0 for k in ("b_two", "b_four", "b_h100")]
    more = "all" if all(others) else "some" if any(others) else "none"
    facets = [("one_mi300x", "fits" if counts["b_one"] > 0 else "unfit"), ("more_gpus", more)]
    return composed("mi300x_memory", facets, values)


def mi300x_per_gpu(settings: SiteSettings) -> Said:
    """Plain decoding's throughput per GPU at 64 sequences on four H100s, four MI300X and two."""
    rates = {f"{h.split('-')[0]}_tp{g}": float(_mi300x_eagle(settings, h, g).base_tokens_per_s[1]) / g
             for h, g in (("h100-sxm", 4), ("mi300x", 4), ("mi300x", 2))}  # fmt: skip
    values = {k: plain(v, 0) for k, v in rates.items()}
    outcome = "busier" if rates["mi300x_tp2"] > rates["mi300x_tp4"] else "not_busier"
    return claim("mi300x_per_gpu", outcome, values)


def tree_width(settings: SiteSettings) -> Said:
    """Where the wide tree falls behind the chain and below plain decoding."""
    data = multi.tree_ladder(settings)
    chain, wide = (data[data["shape"] == k]["speedup"].to_numpy() for k in ("chain", "wide"))
    behind = first_rung(LADDER, wide < chain)
    values = {"behind": rung(behind), "loss": rung(first_rung(LADDER, slower(wide)))}
    return claim("tree_width", "never_behind" if behind is None else "shrink", values)


def moe_premise(settings: SiteSettings) -> Said:
    """The mixture of experts' verify pass against its plain step at 1 and 64 sequences."""
    ev = multi.moe_pass(settings, multi.MOE_TARGET, drafter=multi.MOE_DRAFT, concurrency=np.array([1, 64]))
    ratio = np.asarray(ev.verify_weights_read_bytes / ev.plain_weights_read_bytes)
    moe = get_architecture(multi.MOE_TARGET)
    distinct = experts.expected_distinct_experts(64, moe.num_experts or 1, moe.num_experts_per_tok or 1)
    values = {"distinct_64": plain(float(distinct), 1), "experts": plain(moe.num_experts or 1, 0),
              "ratio_64": times(ratio[1])}  # fmt: skip
    outcome = f"{'removed' if ratio[0] > 1.5 else 'kept'}:{'returns' if ratio[1] < 1.1 else 'stays'}"
    return claim("moe_premise", outcome, values)


def moe_curves(settings: SiteSettings) -> Said:
    """Where the EAGLE head does best on the mixture of experts and on the dense model, and on
    the larger mixture of experts on eight GPUs."""
    data = multi.moe_ladders(settings)
    best = {}
    for target in (multi.MOE_TARGET, multi.DENSE_TARGET):
        label = get_architecture(target).name
        part = data[(data["panel"].str.startswith(label + ",")) & (data["drafter"] == "eagle")]
        curve = part["speedup"].to_numpy()
        best[target] = (int(LADDER[np.argmax(curve)]), float(curve.max()), float(curve[6]))
    big = get_architecture("qwen3-235b-a22b")
    b8 = one(settings, concurrency=LADDER, target=big.key, tensor_parallel=8, drafter="eagle", engine=multi.ENGINE)
    values = {
        "moe_best_b": plain(best[multi.MOE_TARGET][0], 0),
        "moe_best": times(best[multi.MOE_TARGET][1]),
        "dense_best_b": plain(best[multi.DENSE_TARGET][0], 0),
        "dense_best": times(best[multi.DENSE_TARGET][1]),
        "dense_b64": times(best[multi.DENSE_TARGET][2]),
        "big_name": name(big.name),
        "big_plain": name(gib(float(b8.plain_weights_read_bytes[0]))),
        "big_verify": name(gib(float(b8.verify_weights_read_bytes[0]))),
        "big_b1": times(b8.speedup[0]),
        "big_best": times(b8.speedup.max()),
        "big_best_b": plain(LADDER[np.argmax(b8.speedup)], 0),
    }
    shape = "opposite" if best[multi.MOE_TARGET][0] > best[multi.DENSE_TARGET][0] else "alike"
    big_shape = "alike" if int(np.argmax(b8.speedup)) > 0 and shape == "opposite" else "different"
    facets = [("two_models", shape), ("larger_model", big_shape)]
    return composed("moe_curves", facets, values)


CLAIMS = (
    b70_gpus,
    b70_predictions,
    b70_ladder,
    b70_fits,
    mi300x_memory,
    mi300x_links,
    mi300x_per_gpu,
    tree_width,
    moe_premise,
    moe_curves,
)
