"""A card read from a TOML file of its own, validated and registered beside the catalogue."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest

from specmodel import evaluate
from specmodel.errors import SpecModelError
from specmodel.model.hardware_file import load_hardware_file
from specmodel.model.profile_file import toml_value
from specmodel.model.specs import get_hardware

H100 = get_hardware("h100-sxm")


def _tables(name: str, values: dict[str, Any]) -> list[str]:
    """``[name]`` with its scalars, then a sub-table per dict value (the layout of data/hardware.toml)."""
    lines = [f"[{name}]", *(f"{k} = {toml_value(v)}" for k, v in values.items() if not isinstance(v, dict))]
    for k, v in values.items():
        if isinstance(v, dict):
            lines += ["", *_tables(f"{name}.{k}", v)]
    return lines


def _card(key: str, **changes: Any) -> str:
    """The H100 SXM's record as a card file under ``key``, with ``changes`` to its fields."""
    values = {**{k: v for k, v in asdict(H100).items() if k != "key" and v is not None}, **changes}
    return "\n".join(_tables(key, values)) + "\n"


def test_a_good_file_registers_its_card(tmp_path):
    path = tmp_path / "card.toml"
    path.write_text(_card("h100-lab", name="H100 SXM, our lab's clocks"), encoding="utf-8")
    assert load_hardware_file(path) == "h100-lab"
    card = get_hardware("h100-lab")
    assert card.memory_bandwidth == H100.memory_bandwidth and card.name == "H100 SXM, our lab's clocks"
    assert float(evaluate(hardware="h100-lab").speedup) == float(evaluate(hardware="h100-sxm").speedup)
    assert load_hardware_file(path) == "h100-lab"  # the same card again changes nothing


def test_a_catalogue_card_copied_unchanged_is_accepted(tmp_path):
    path = tmp_path / "card.toml"
    path.write_text(_card("h100-sxm"), encoding="utf-8")
    assert load_hardware_file(path) == "h100-sxm"


def _refused(tmp_path, text: str, message: str) -> str:
    path = tmp_path / "card.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecModelError, match=message) as err:
        load_hardware_file(path, "--hardware-file")
    assert "\n" not in str(err.value) and "--hardware-file" in str(err.value)
    return str(err.value)


def test_a_number_without_a_source_is_refused(tmp_path):
    text = _card("no-source").replace(f"source = {toml_value(H100.peak_flops.source)}\n", "", 1)
    _refused(tmp_path, text, r"peak_flops\.source: Field required")


def test_an_unknown_field_is_refused_naming_it(tmp_path):
    message = _refused(tmp_path, _card("extra", tdp=700), r"unknown setting 'tdp'; allowed: key, name,")
    assert "fp8_peak_flops" in message


def test_two_tables_are_refused(tmp_path):
    _refused(tmp_path, _card("one") + "\n" + _card("two"), r"must hold exactly one table, \[KEY\]")


def test_a_negative_number_is_refused(tmp_path):
    bandwidth = {"value": -3.35e12, "unit": "B/s", "source": "a typing slip"}
    _refused(
        tmp_path,
        _card("negative", memory_bandwidth=bandwidth),
        r"memory_bandwidth\.value: Input should be greater than 0",
    )


def test_a_catalogue_key_with_other_numbers_is_refused(tmp_path):
    bandwidth = {"value": 4e12, "unit": "B/s", "source": "overclocked"}
    _refused(tmp_path, _card("h100-sxm", memory_bandwidth=bandwidth), r"hardware key 'h100-sxm' already names a card")
    assert get_hardware("h100-sxm") == H100


def test_a_wrong_unit_is_refused(tmp_path):
    fp8 = {"value": 1978.9e12, "unit": "TFLOP/s", "source": "datasheet"}
    _refused(tmp_path, _card("units", fp8_peak_flops=fp8), r"fp8_peak_flops must be given in FLOP/s")


def test_a_missing_file_and_a_bad_key_are_refused(tmp_path):
    with pytest.raises(SpecModelError, match=r"--hardware-file .*: no such file"):
        load_hardware_file(tmp_path / "none.toml")
    _refused(tmp_path, _card("Big_Card"), r"is not a card key")
