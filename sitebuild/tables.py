"""Markdown tables of the page "Model and assumptions", computed from the package's data
files: the models and accelerators it knows, every modelling constant with its reason, and the
model against every figure the article quotes (the last two also in the README). The tables
that go with a figure are in that figure's module of :mod:`sitebuild.figures`."""

from __future__ import annotations

import ast
from importlib import resources
from pathlib import Path

from sitebuild.config import SiteSettings
from specmodel.calibration import compare, load_table, markdown_table
from specmodel.formatting import GIB, KIB
from specmodel.model import architecture as arch
from specmodel.model import constants as declared_constants
from specmodel.model.specs import architecture_catalog, hardware_catalog


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
    """Accelerators: peak figures (dense BF16, and dense FP8 where the card has FP8 tensor cores)
    and memory (the datasheet's, and the total the card reports, which the usable share is
    taken of), with their sources."""
    out = [
        "| key | accelerator | HBM bandwidth | dense BF16 / FP8 | HBM, datasheet | HBM, reported | sources |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    fields = (
        "memory_bandwidth",
        "peak_flops",
        "fp8_peak_flops",
        "int8_peak_flops",
        "datasheet_memory_capacity",
        "memory_capacity",
    )
    for key, hw in hardware_catalog().items():
        sources = "<br>".join(f"{f}: {getattr(hw, f).source}" for f in fields if getattr(hw, f) is not None)
        fp8 = "none" if hw.fp8_peak_flops is None else f"{hw.fp8_peak_flops.value / 1e12:.4g}"
        out.append(
            f"| `{key}` | {hw.name} | {hw.memory_bandwidth.value / 1e12:.3g} TB/s | "
            f"{hw.peak_flops.value / 1e12:.4g} / {fp8} TFLOP/s | {hw.datasheet_memory_capacity.value / 1e9:.0f} GB | "
            f"{hw.memory_capacity.value / GIB:.2f} GiB | {sources} |"
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
