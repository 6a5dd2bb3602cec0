"""Card memory as the card reports it: the capacity the model takes the usable share of is
nvidia-smi's total (an H100 SXM: 81,559 MiB, 79.65 GiB), not the datasheet's 80 GB (74.5 GiB),
and everything that counts sequences follows it."""

from __future__ import annotations

import json
import math
import re

import pytest

from sitebuild.config import SiteSettings
from sitebuild.figures.cards import hardware_capacity_table
from sitebuild.figures.costs import capacity_table
from sitebuild.tables import hardware
from specmodel import evaluate
from specmodel.formatting import GIB
from specmodel.model import architecture as arch
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture
from tests.cli_runner import cli

#: nvidia-smi's total on an H100 SXM, in GiB (81559 MiB; github NVIDIA/nccl issue 1264).
H100_REPORTED_GIB = 79.65


def _point(*args: str) -> dict:
    status, out, err = cli("point", "--json", *args)
    assert status == 0, err
    return json.loads(out)


def test_point_json_reports_the_h100s_capacity_as_the_card_does():
    data = _point("--hardware", "h100-sxm")
    assert data["hbm_capacity_gib"] == pytest.approx(H100_REPORTED_GIB, abs=0.1)
    assert data["hbm_capacity_gib"] > 80e9 / GIB + 5  # not the datasheet's 80 GB (74.5 GiB)
    utilization = Settings().constants.GPU_MEMORY_UTILIZATION
    assert data["hbm_usable_gib"] == pytest.approx(utilization * data["hbm_capacity_gib"])


def test_the_most_sequences_that_fit_follow_the_reported_memory():
    """floor((u C - W - A) / ((T + G) kv)) with C the reported total, the target alone."""
    c = Settings().constants
    ev = evaluate(hardware="h100-sxm", target="qwen3-8b", context=2048)
    t = get_architecture("qwen3-8b")
    per_sequence = (2048 + c.GENERATED_TOKENS) * arch.kv_cache_bytes_per_token(t)

    def fit(capacity: float) -> int:
        free = c.GPU_MEMORY_UTILIZATION * capacity - arch.weight_bytes(t) - c.WORKSPACE_BYTES
        return math.floor(free / per_sequence)

    assert int(ev.max_concurrency_without_draft) == fit(81559 * 2**20)
    assert fit(81559 * 2**20) > 1.07 * fit(80e9)  # the datasheet's figure would count about 8% fewer


def test_the_capacity_table_takes_the_usable_share_of_the_reported_memory():
    text = capacity_table(SiteSettings())
    usable = 0.9 * H100_REPORTED_GIB
    line = re.search(r"Usable on one .*?: ([\d.]+) GiB \(90% of the ([\d.]+) GiB the card reports\)", text)
    assert line, text
    assert float(line.group(2)) == pytest.approx(H100_REPORTED_GIB, abs=0.1)
    assert float(line.group(1)) == pytest.approx(usable, abs=0.1)


def test_the_hardware_capacity_table_takes_the_usable_share_of_the_reported_memory():
    """The "Other cards" table's usable memory is the usable share of what the card reports (the
    page's text gives the reported totals; a seventh column would not fit a phone's width)."""
    text = hardware_capacity_table(SiteSettings(), ["h100-sxm"], contexts=(2048,))
    row = next(line for line in text.splitlines() if line.startswith("| NVIDIA H100"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert float(cells[1].removesuffix(" GiB")) == pytest.approx(0.9 * H100_REPORTED_GIB, abs=0.1)
    plain = int(evaluate(hardware="h100-sxm", context=2048).max_concurrency_without_draft)
    assert int(cells[2].replace(",", "")) == plain


def test_the_hardware_table_gives_both_the_datasheet_and_the_reported_memory():
    row = next(line for line in hardware().splitlines() if line.startswith("| `h100-sxm`"))
    assert "| 80 GB |" in row and "| 79.65 GiB |" in row
    assert "81559" in row  # the reported figure's source is quoted
