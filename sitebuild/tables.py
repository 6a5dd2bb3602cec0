"""Markdown tables for the site, computed from the model and its data files."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from sitebuild.config import SiteSettings
from sitebuild.theme import drafter_label
from specmodel.calibration import compare, load_table, markdown_table
from specmodel.formatting import GIB, KIB
from specmodel.model import architecture as arch
from specmodel.model import constants as declared_constants
from specmodel.model.evaluate import evaluate
from specmodel.model.specs import architecture_catalog, get_hardware, hardware_catalog


def calibration(table_path: Path | None = None) -> str:
    """Model vs article, one row per quoted figure, with the relative error; always with the
    package's own settings (the article's deployment and constants)."""
    return markdown_table(compare(load_table(table_path), SiteSettings()))


def constant_docs() -> list[tuple[str, str, str]]:
    """(name, value, reason) for each constant in specmodel/constants.py, reason taken from
    its ``#:`` comment, as Sphinx's autodoc reads attribute comments."""
    source = resources.files("specmodel.model").joinpath("constants.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    rows = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            comment: list[str] = []
            i = node.lineno - 2
            while i >= 0 and lines[i].startswith("#:"):
                comment.insert(0, lines[i][2:].strip())
                i -= 1
            value = ast.get_source_segment(source, node.value)
            assert value is not None, "a node parsed from source has its position"
            rows.append((node.targets[0].id, value, " ".join(comment)))
    return rows


def constants(settings: SiteSettings) -> str:
    """Every modelling constant with its value in ``settings`` and reason (a value a
    ``--config`` file changed says so, with the declared one)."""
    out = ["| constant | value | why |", "| --- | --- | --- |"]
    force = settings.constants
    for name, value, reason in constant_docs():
        declared, now = getattr(declared_constants, name), getattr(force, name)
        shown = f"`{value}`" if now == declared else f"`{now!r}` (set by the config; declared `{value}`)"
        out.append(f"| `{name}` | {shown} | {reason} |")
    return "\n".join(out)


def hardware() -> str:
    """Accelerators: peak figures with their sources."""
    out = [
        "| key | accelerator | HBM bandwidth | dense BF16 | HBM | sources |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for key, hw in hardware_catalog().items():
        sources = "<br>".join(
            f"{f}: {getattr(hw, f).source}" for f in ("memory_bandwidth", "peak_flops", "memory_capacity")
        )
        out.append(
            f"| `{key}` | {hw.name} | {hw.memory_bandwidth.value / 1e12:.3g} TB/s | "
            f"{hw.peak_flops.value / 1e12:.4g} TFLOP/s | {hw.memory_capacity.value / 1e9:.0f} GB | {sources} |"
        )
    return "\n".join(out)


def models() -> str:
    """Architectures: config.json fields and the quantities derived from them. F is the MLP
    width; a mixture-of-experts model's is written ``E x F_e, top k`` (experts per layer,
    each expert's width, experts per token), and its active parameters follow its total."""
    out = [
        "| key | L | D | N | K | H | F | V | tied | parameters | weights | KV per token | source |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | --- |",
    ]
    for key, a in architecture_catalog().items():
        mlp, params = str(a.intermediate_size), f"{arch.parameter_count(a) / 1e9:.3f} B"
        if arch.is_moe(a):
            mlp = f"{a.num_experts} x {a.moe_intermediate_size}, top {a.num_experts_per_tok}"
            params += f" ({arch.active_parameter_count(a) / 1e9:.3f} B active)"
        out.append(
            f"| `{key}` | {a.num_hidden_layers} | {a.hidden_size} | {a.num_attention_heads} | "
            f"{a.num_key_value_heads} | {a.head_dim} | {mlp} | {a.vocab_size} | "
            f"{'yes' if a.tie_word_embeddings else 'no'} | "
            f"{params} | {arch.weight_bytes(a) / GIB:.2f} GiB | "
            f"{arch.kv_cache_bytes_per_token(a) / KIB:.0f} KiB | [config.json]({a.source}) |"
        )
    return "\n".join(out)


def footprint(settings: SiteSettings) -> str:
    """The article's table: layers, KV heads, head dim, weights and cache per token of the
    deployment's target and two draft models, with each draft's share of the target's."""
    target = settings.deployment.target
    drafts = (settings.deployment.draft, settings.deployment.big_draft)
    catalog = architecture_catalog()
    t = catalog[target]
    out = [
        "| model | layers | KV heads | head dim | weights | KV cache per token |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, role in [(target, "target")] + [(d, "draft") for d in drafts]:
        a = catalog[key]
        w, kv = arch.weight_bytes(a), arch.kv_cache_bytes_per_token(a)
        share = "" if key == target else f" ({w / arch.weight_bytes(t):.0%})"
        kv_share = "" if key == target else f" ({kv / arch.kv_cache_bytes_per_token(t):.0%})"
        out.append(
            f"| {a.name} ({role}) | {a.num_hidden_layers} | {a.num_key_value_heads} | {a.head_dim} | "
            f"{w / GIB:.2f} GiB{share} | {kv / KIB:.0f} KiB{kv_share} |"
        )
    return "\n".join(out)


def heads(costs: pd.DataFrame) -> str:
    """What one draft step costs per drafter (:func:`sitebuild.figures_data.head_costs`)."""
    out = [
        "| drafter | scores over | weights read per step | of which LM head | memory of its own | "
        "cache per token | draft pass, 1 seq. | draft pass, 64 seq. | speedup, 1 seq. | speedup, 64 seq. |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in costs.itertuples():
        out.append(
            f"| {drafter_label(str(r.drafter))} | {r.vocabulary:,} tokens | {r.weights_read_gib:.2f} GiB | "
            f"{r.lm_head_gib:.2f} GiB ({r.lm_head_share:.0%}) | {r.resident_gib:.2f} GiB | "
            f"{r.kv_kib_per_token:.0f} KiB | {r.step_gib_b1:.2f} GiB | {r.step_gib_bn:.2f} GiB | "
            f"{r.speedup_b1:.2f}x | {r.speedup_bn:.2f}x |"
        )
    return "\n".join(out)


#: The article's scenarios whose memory the capacity table checks: (concurrency, context).
ARTICLE_SCENARIOS = ((1, 2048), (32, 2048), (64, 2048), (64, 8192), (128, 2048), (1024, 256), (1024, 2048))


def capacity(settings: SiteSettings, scenarios: Sequence[tuple[int, int]] = ARTICLE_SCENARIOS) -> str:
    """For each of the article's scenarios: memory needed with the draft model and without
    (plain decoding), against what the card offers."""
    d = settings.deployment
    hw = get_hardware(d.hardware)
    batch, t = (np.array(x) for x in zip(*scenarios))
    spec = evaluate(concurrency=batch, context=t, settings=settings)
    plain = evaluate(concurrency=batch, context=t, drafter="ngram", settings=settings)
    usable = float(spec.usable_memory_bytes[0]) / GIB
    out = [
        f"| sequences | context | with {drafter_label(d.draft)} | fits | plain decoding | fits |",
        "| ---: | ---: | ---: | :---: | ---: | :---: |",
    ]
    for i in range(len(batch)):
        out.append(
            f"| {batch[i]:,} | {t[i]:,} | {spec.memory_required_bytes[i] / GIB:,.1f} GiB | "
            f"{'yes' if spec.fits[i] else '**no**'} | {plain.memory_required_bytes[i] / GIB:,.1f} GiB | "
            f"{'yes' if plain.fits[i] else '**no**'} |"
        )
    out.append(
        f"\nUsable on one {hw.name}: {usable:,.1f} GiB ({settings.constants.GPU_MEMORY_UTILIZATION:.0%} of "
        f"{hw.memory_capacity.value / GIB:,.1f} GiB)."
    )
    return "\n".join(out)


def hardware_capacity(settings: SiteSettings, cards: Iterable[str], contexts: Sequence[int] = (2048, 8192)) -> str:
    """Most concurrent sequences each card holds, with the draft model and without, per context."""
    d = settings.deployment
    head = " | ".join(f"context {c:,}: plain | with draft" for c in contexts)
    out = [f"| card | usable memory | {head} |", "| --- | ---: |" + " ---: | ---: |" * len(contexts)]
    for card in cards:
        ev = evaluate(context=np.array(contexts), hardware=card, settings=settings)
        cells = " | ".join(
            f"{int(p):,} | {int(w):,}" for p, w in zip(ev.max_concurrency_without_draft, ev.max_concurrency)
        )
        out.append(f"| {get_hardware(card).name} | {float(ev.usable_memory_bytes[0]) / GIB:,.1f} GiB | {cells} |")
    out.append(f"\nDraft: {drafter_label(d.draft)}; target: {architecture_catalog()[d.target].name}.")
    return "\n".join(out)


def module_docstring_summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line, with Sphinx roles removed."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return re.sub(r":(?:mod|func|class|data|meth|attr):`~?([^`]+)`", r"`\1`", first).replace("``", "`")


def module_map(root: Path) -> str:
    """Every module of the package and of the site builder with the first paragraph of its
    docstring: the README's map of where things live."""
    out = ["| module | what it holds |", "| --- | --- |"]
    for package in ("specmodel", "sitebuild"):
        for path in sorted((root / package).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            out.append(f"| `{name}` | {module_docstring_summary(path).replace('|', '/')} |")
    return "\n".join(out)
