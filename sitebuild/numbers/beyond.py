"""The page "Beyond one GPU" and the four-GPU part of the validation page: Llama-3-70B on
four H100s against its measurements, the same deployment on MI300X, trees against a chain,
and a mixture of experts against a dense model.

The deployments, drafters and workloads are those of :mod:`sitebuild.figures.beyond`,
so that the prose quotes the figures' own scenarios.
"""

from __future__ import annotations

import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.figures import beyond as multi
from sitebuild.numbers.common import fitted_series_numbers
from sitebuild.numbers.text import Number, gib, name, percent, plain, times
from specmodel.model import architecture as arch
from specmodel.model import experts, parallel
from specmodel.model.scenario import DEFAULTS
from specmodel.model.specs import get_architecture, get_hardware

#: How the prose names each measured drafter in a number's key.
ROLE = {"llama-3.2-1b": "draft", "eagle": "eagle", "ngram": "ngram"}
#: Which deployments' numbers the page quotes: all-reduce shares at 64 sequences and the EAGLE
#: head's speedups (the batch that fits is a claim, :func:`sitebuild.claims.beyond.mi300x_memory`).
QUOTED_B1 = ("h100_tp4", "h100_tp8", "mi300x_tp4", "mi300x_tp8")
QUOTED_B64 = ("h100_tp4", "mi300x_tp4")
QUOTED_EAGLE = ("h100_tp4", "mi300x_tp1", "mi300x_tp2", "mi300x_tp4")
#: Deployments whose numbers the page quotes, by key: (hardware, GPUs).
CARDS = {
    "h100_tp4": ("h100-sxm", 4),
    "h100_tp8": ("h100-sxm", 8),
    "mi300x_tp1": ("mi300x", 1),
    "mi300x_tp2": ("mi300x", 2),
    "mi300x_tp4": ("mi300x", 4),
    "mi300x_tp8": ("mi300x", 8),
}


def _series(settings: SiteSettings) -> dict[str, multi.Series]:
    return multi.workload_series(settings)


def measured_numbers(settings: SiteSettings) -> dict[str, Number]:
    """Llama-3-70B on four H100s: its memory, the all-reduce share of its verify pass, the
    fitted acceptance of the ShareGPT series and the model's ladder against the measurements."""
    series = _series(settings)
    draft = series["llama-3.2-1b"]
    target = get_architecture(multi.BIG_TARGET)
    one_gpu = multi.evaluate_series(settings, draft, concurrency=1, tensor_parallel=1)
    n: dict[str, Number] = {
        "b70_name": name(target.name),
        "b70_weights_gib": gib(arch.weight_bytes(target)),
        "h100_usable_gib": gib(float(one_gpu.usable_memory_bytes)),
        "h100_capacity_gb": plain(get_hardware(multi.BIG_HARDWARE).datasheet_memory_capacity.value / 1e9, 0),
        "b70_allreduces": plain(float(parallel.allreduces_per_pass(target.num_hidden_layers, multi.BIG_TP)), 0),
        "b70_layers": plain(target.num_hidden_layers, 0),
        "b70_prompt": plain(draft.fields["context"], 0),
        "b70_output": plain(draft.fields["generated_tokens"], 0),
        "b70_gamma": plain(draft.fields["gamma"], 0),
    }
    eagle = multi.evaluate_series(settings, series["eagle"], concurrency=np.array([1, 64]))
    link = get_hardware(multi.BIG_HARDWARE).interconnect
    latency = parallel.allreduce_latency(multi.BIG_TP, link.allreduce_latency.value, link.hop_latency.value)
    n["b70_allreduce_us"] = plain(float(latency) * 1e6, 1)
    n["b70_comm_b1"] = percent(eagle.verify_communication_share[0])
    n["b70_comm_b64"] = percent(eagle.verify_communication_share[1])
    points = multi.measured_ladders(settings)[1]
    for drafter, s in series.items():
        key, curve = ROLE[drafter], multi.evaluate_series(settings, s).speedup
        n[f"fit_m_{key}"] = plain(s.mean_acceptance_length)
        n[f"b70_{key}_b64"] = times(curve[6])
        mine = points[(points["drafter"] == drafter) & points["panel"].str.startswith(multi.WORKLOAD)]
        n[f"b70_{key}_b64_measured"] = times(float(mine.loc[mine["batch"] == 64, "measured"].iloc[0]))
    return n


def card_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The measured deployment on H100 and MI300X: memory, the interconnect a group of N_g GPUs
    has, the all-reduce share of the verify pass, and the EAGLE head's speedup."""
    series = _series(settings)
    draft, eagle = series["llama-3.2-1b"], series["eagle"]
    mi = get_hardware("mi300x")
    n: dict[str, Number] = {
        "mi300x_capacity_gb": plain(mi.datasheet_memory_capacity.value / 1e9, 0),
        "mi300x_hbm_tbps": plain(mi.memory_bandwidth.value / 1e12, 1),
        "h100_hbm_tbps": plain(get_hardware("h100-sxm").memory_bandwidth.value / 1e12, 2),
        "mi300x_link_gbs": plain(mi.interconnect.bandwidth.value / 1e9, 0),
        "mi300x_links": plain(mi.interconnect.max_tensor_parallel.value - 1, 0),
        "h100_link_gbs": plain(get_hardware("h100-sxm").interconnect.bandwidth.value / 1e9, 0),
    }
    for gpus in (2, 4, 8):
        group = parallel.group_bandwidth(mi.interconnect.bandwidth.value, mi.interconnect.topology, gpus)
        n[f"mi300x_group_gbs_tp{gpus}"] = plain(float(group) / 1e9, 0)
    for key, (hardware, gpus) in CARDS.items():
        on = {"hardware": hardware, "tensor_parallel": gpus}
        e = multi.evaluate_series(settings, eagle, concurrency=np.array([1, 64]), **on)
        d = multi.evaluate_series(settings, draft, concurrency=1, **on)
        if key in QUOTED_B1:
            n[f"comm_b1_{key}"] = percent(e.verify_communication_share[0])
        if key in QUOTED_B64:
            n[f"comm_b64_{key}"] = percent(e.verify_communication_share[1])
        if key in QUOTED_EAGLE:
            n[f"eagle_b1_{key}"] = times(e.speedup[0])
            n[f"eagle_b64_{key}"] = times(e.speedup[1])
        if key == "mi300x_tp1":
            n[f"usable_{key}"] = gib(float(d.usable_memory_bytes))
    return n


def tree_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The chain and the trees of :data:`sitebuild.figures.beyond.TREES`: their shapes,
    speedups at 1 and 64 sequences, tokens per verify pass and arithmetic."""
    data = multi.tree_ladder(settings)
    n: dict[str, Number] = {"tree_steps": plain(multi.TREE_STEPS, 0)}
    for key, _, topk, verify in multi.TREES:
        part = data[data["shape"] == key].set_index("concurrency")
        if key != "chain":
            n[f"tree_{key}_k"] = plain(topk, 0)
        n[f"tree_{key}_v"] = plain(verify, 0)
        n[f"tree_{key}_b1"] = times(part.loc[1, "speedup"])
        n[f"tree_{key}_b64"] = times(part.loc[64, "speedup"])
        n[f"tree_{key}_mal"] = plain(part.loc[1, "mean_acceptance_length"])
        if key != "sglang":
            n[f"tree_{key}_arith"] = times(part.loc[64, "arithmetic_ratio"], 1)
    n["tree_alpha"] = plain(DEFAULTS["alpha"])
    return n


def moe_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The mixture of experts against the dense model: weights, experts a pass reads, speedups;
    and the larger mixture of experts on eight GPUs."""
    moe, dense = get_architecture(multi.MOE_TARGET), get_architecture(multi.DENSE_TARGET)
    assert moe.num_experts is not None and moe.num_experts_per_tok is not None
    gamma = int(DEFAULTS["gamma"])
    b1 = multi.moe_pass(settings, multi.MOE_TARGET, drafter=multi.MOE_DRAFT, concurrency=1)
    distinct = np.asarray(
        experts.expected_distinct_experts(np.array([1, gamma + 1, 64]), moe.num_experts, moe.num_experts_per_tok)
    )
    n: dict[str, Number] = {
        "moe_name": name(moe.name), "dense_name": name(dense.name), "moe_tp": plain(multi.MOE_TP, 0),
        "moe_draft_name": name(get_architecture(multi.MOE_DRAFT).name),
        "moe_weights_gib": gib(arch.weight_bytes(moe)), "dense_weights_gib": gib(arch.weight_bytes(dense)),
        "moe_active_b": plain(arch.active_parameter_count(moe) / 1e9, 1),
        "moe_experts": plain(moe.num_experts, 0), "moe_topk": plain(moe.num_experts_per_tok, 0),
        "moe_plain_read_b1": gib(float(b1.plain_weights_read_bytes)),
        "moe_verify_read_b1": gib(float(b1.verify_weights_read_bytes)),
        "moe_verify_ratio_b1": times(float(b1.verify_weights_read_bytes / b1.plain_weights_read_bytes), 1),
        "moe_distinct_1": plain(distinct[0], 0), "moe_distinct_verify": plain(distinct[1], 1),
        "moe_verify_positions": plain(gamma + 1, 0),
    }  # fmt: skip
    data = multi.moe_ladders(settings)
    for target, key in ((moe, "moe"), (dense, "dense")):
        for drafter in multi.MOE_DRAFTERS:
            role = "draft" if drafter == multi.MOE_DRAFT else drafter
            part = data[(data["panel"].str.startswith(target.name + ",")) & (data["drafter"] == drafter)]
            n[f"{key}_{role}_b1"] = times(part["speedup"].to_numpy()[0])
    return n


def validation_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The four-GPU measurements: how many, and each engine's errors on the held-out rows."""
    return fitted_series_numbers("multigpu", lambda engine: multi.fitted(settings, engine))
