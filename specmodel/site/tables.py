"""Markdown tables for the site, computed from the model and its data files."""

from __future__ import annotations

import ast
from importlib import resources
from pathlib import Path

from specmodel import architecture as arch
from specmodel.calibration import compare, load_table, markdown_table
from specmodel.readouts import GIB, KIB
from specmodel.specs import architecture_catalog, hardware_catalog


def calibration(table_path: Path) -> str:
    """Model vs article, one row per quoted figure, with the relative error."""
    return markdown_table(compare(load_table(table_path)))


def constant_docs() -> list[tuple[str, str, str]]:
    """(name, value, reason) for each constant in specmodel/constants.py, reason taken from
    its ``#:`` comment, as Sphinx's autodoc reads attribute comments."""
    source = resources.files("specmodel").joinpath("constants.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    rows = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            comment = []
            i = node.lineno - 2
            while i >= 0 and lines[i].startswith("#:"):
                comment.insert(0, lines[i][2:].strip())
                i -= 1
            rows.append((node.targets[0].id, ast.get_source_segment(source, node.value), " ".join(comment)))
    return rows


def constants() -> str:
    """Every modelling constant with its value and reason."""
    out = ["| constant | value | why |", "| --- | --- | --- |"]
    out += [f"| `{name}` | `{value}` | {reason} |" for name, value, reason in constant_docs()]
    return "\n".join(out)


def hardware() -> str:
    """Accelerators: peak figures with their sources."""
    out = ["| key | accelerator | HBM bandwidth | dense BF16 | HBM | sources |", "| --- | --- | ---: | ---: | ---: | --- |"]
    for key, hw in hardware_catalog().items():
        sources = "<br>".join(f"{f}: {getattr(hw, f).source}" for f in ("memory_bandwidth", "peak_flops", "memory_capacity"))
        out.append(f"| `{key}` | {hw.name} | {hw.memory_bandwidth.value / 1e12:.3g} TB/s | "
                   f"{hw.peak_flops.value / 1e12:.4g} TFLOP/s | {hw.memory_capacity.value / 1e9:.0f} GB | {sources} |")
    return "\n".join(out)


def models() -> str:
    """Architectures: config.json fields and the quantities derived from them."""
    out = ["| key | L | D | N | K | H | F | V | tied | parameters | weights | KV per token | source |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | --- |"]
    for key, a in architecture_catalog().items():
        out.append(
            f"| `{key}` | {a.num_hidden_layers} | {a.hidden_size} | {a.num_attention_heads} | {a.num_key_value_heads} | "
            f"{a.head_dim} | {a.intermediate_size} | {a.vocab_size} | {'yes' if a.tie_word_embeddings else 'no'} | "
            f"{arch.parameter_count(a) / 1e9:.3f} B | {arch.weight_bytes(a) / GIB:.2f} GiB | "
            f"{arch.kv_cache_bytes_per_token(a) / KIB:.0f} KiB | [config.json]({a.source}) |"
        )
    return "\n".join(out)


def footprint(target: str = "qwen3-8b", drafts: tuple[str, ...] = ("qwen3-0.6b", "qwen3-1.7b")) -> str:
    """The article's table: layers, KV heads, head dim, weights and cache per token, with
    each draft's share of the target's."""
    catalog = architecture_catalog()
    t = catalog[target]
    out = ["| model | layers | KV heads | head dim | weights | KV cache per token |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for key, role in [(target, "target")] + [(d, "draft") for d in drafts]:
        a = catalog[key]
        w, kv = arch.weight_bytes(a), arch.kv_cache_bytes_per_token(a)
        share = "" if key == target else f" ({w / arch.weight_bytes(t):.0%})"
        kv_share = "" if key == target else f" ({kv / arch.kv_cache_bytes_per_token(t):.0%})"
        out.append(f"| {a.name} ({role}) | {a.num_hidden_layers} | {a.num_key_value_heads} | {a.head_dim} | "
                   f"{w / GIB:.2f} GiB{share} | {kv / KIB:.0f} KiB{kv_share} |")
    return "\n".join(out)
