"""The other pages' numbers: the cards compared on the hardware page, and the figures the
article quotes from papers."""

from __future__ import annotations

import tomllib

from sitebuild.config import SiteSettings
from sitebuild.figures.cards import COMPARED_HARDWARE
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, gib, name, plain
from sitebuild.paths import LITERATURE
from specmodel.model.specs import get_hardware


def hardware_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The deployment's model pair on each card the hardware page compares, by card key."""
    n: dict[str, Number] = {}
    for card in COMPARED_HARDWARE:
        hw = get_hardware(card)
        d = one(settings, hardware=card)
        n[f"name_{card}"] = name(hw.name)
        n[f"bandwidth_{card}"] = plain(hw.memory_bandwidth.value / 1e12, 2)
        n[f"capacity_{card}"] = plain(hw.datasheet_memory_capacity.value / 1e9, 0)
        n[f"reported_{card}"] = gib(hw.memory_capacity.value)
        n[f"base_tps_b1_{card}"] = plain(d.base_tokens_per_s, 0)
        n[f"spec_tps_b1_{card}"] = plain(d.spec_tokens_per_s, 0)
    return n


def literature_numbers(settings: SiteSettings) -> dict[str, Number]:
    """Figures quoted from papers, from sitebuild/data/literature.toml (each with its
    source), as ``paper_<key>``: speedups print as ``3.4x``, the rest as given."""
    text = LITERATURE.read_text(encoding="utf-8")
    out = {}
    for key, entry in tomllib.loads(text).items():
        value = float(entry["value"])
        text = f"{value:g}x" if entry["unit"] == "x" else f"{value:g}"
        out[f"paper_{key}"] = Number(value, text, quoted=entry["source"])
    return out
