"""An engine profile's domain: the targets, cards, drafters, GPUs and batches its runs cover,
recorded by the fits and read back; the notes on a scenario outside it (``point`` text and
JSON); and an MTP drafter refused on the command line for a target that ships no MTP layers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from sitebuild.public_fit import public_domain
from specmodel.measurements import load_measurements
from specmodel.model import drafters
from specmodel.model.domain import domain_line, outside_domain, profile_domain
from specmodel.model.drafters import check_declared_head
from specmodel.model.engines import ProfileDomain, engine_catalog
from specmodel.model.evaluate import evaluate
from specmodel.model.profile_file import load_profile, profile_text
from specmodel.model.specs import get_architecture
from specmodel.records import validate
from tests.cli_runner import cli

ROOT = Path(__file__).resolve().parents[1]
MEASUREMENTS = ROOT / "specmodel" / "data" / "measurements.csv"
VLLM = engine_catalog()["vllm"]
INSIDE = {"target": "llama-3.1-8b", "hardware": "h100-sxm", "drafter": "eagle3", "concurrency": 16}


def test_the_public_profile_records_the_domain_of_its_rows():
    domain = VLLM.domain
    assert domain == public_domain(load_measurements(MEASUREMENTS))
    assert domain.targets == ("llama-3.1-8b",) and domain.hardware == ("h100-sxm",)
    assert domain.drafters == ("eagle", "eagle3", "ngram") and domain.drafter_kinds == ("head", "fused_head", "ngram")
    assert domain.tensor_parallel == (1,) and domain.concurrency == (1, 128)
    assert "vLLM v0.10.1" in domain.engine_versions


def test_the_ideal_engine_has_no_domain_and_holds_everywhere():
    ideal = engine_catalog()["ideal"]
    assert ideal.domain is None
    assert outside_domain(ideal, target="qwen3-32b", hardware="b200", drafter="ngram", concurrency=512) == ()


def test_a_scenario_inside_the_rows_has_no_note():
    assert outside_domain(VLLM, **INSIDE) == ()
    assert outside_domain(VLLM, **{**INSIDE, "concurrency": 100, "drafter": None}) == ()


def test_each_way_outside_is_one_sentence():
    notes = outside_domain(
        VLLM, target="qwen3-32b", hardware="b200", drafter="qwen3-0.6b", concurrency=512, tensor_parallel=4
    )
    assert notes == (
        "the vllm profile was fitted on llama-3.1-8b: qwen3-32b is outside its data",
        "the vllm profile was fitted on h100-sxm: b200 is outside its data",
        "drafter qwen3-0.6b: the vllm profile was fitted on eagle, eagle3 and ngram, no draft model among them",
        "tensor parallel 4 is outside the vllm profile's data (fitted at tensor parallel 1)",
        "concurrency 512 is above the largest batch the vllm profile was fitted on, 128",
    )


def test_a_head_of_a_fitted_kind_is_named_but_not_a_fitted_one():
    (note,) = outside_domain(VLLM, **{**INSIDE, "drafter": "eagle-32k"})
    assert "not on eagle-32k itself (a draft head, a kind among them)" in note


def test_a_batch_below_the_smallest_fitted_is_named():
    mine = replace(VLLM, domain=replace(VLLM.domain, concurrency=(16, 64)))
    (note,) = outside_domain(mine, **{**INSIDE, "concurrency": 4})
    assert note == "concurrency 4 is below the smallest batch the vllm profile was fitted on, 16"


def test_names_the_catalogue_does_not_know_are_outside_unless_listed():
    domain = profile_domain(targets=["Org/My-Model"], hardware=["my-card"], drafters=["eagle3"], tensor_parallel=[1],
                            concurrency=[8], engine_versions=["vllm (version unstated)"])  # fmt: skip
    mine = replace(VLLM, key="lab", domain=domain)
    assert outside_domain(mine, target="org/my-model", hardware="MY-CARD", drafter="eagle3", concurrency=8) == ()
    notes = outside_domain(mine, target="other/model", hardware="card-b", drafter="medusa", concurrency=8)
    assert len(notes) == 3 and notes[2] == "drafter medusa: the lab profile was fitted on eagle3, not on medusa"


def test_a_fitted_profile_without_a_domain_says_it_is_unknown(tmp_path):
    old = replace(VLLM, key="old", domain=None)
    path = tmp_path / "old.toml"
    path.write_text(profile_text(old))
    assert "domain" not in path.read_text()
    read = load_profile(path)
    assert read.domain is None
    (note,) = outside_domain(read, **INSIDE)
    assert "records no domain" in note and "unknown" in note


def test_the_domain_round_trips_through_a_profile_file(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(profile_text(replace(VLLM, key="copy")))
    assert "[copy.domain]" in path.read_text()
    assert load_profile(path).domain == VLLM.domain


def test_a_batch_range_upside_down_is_refused():
    fields = {"targets": ("a",), "hardware": ("b",), "tensor_parallel": (1,), "concurrency": (128, 1)}
    with pytest.raises(ValueError, match="smallest, largest"):  # built directly: its own rule
        ProfileDomain(**fields)
    with pytest.raises(ValidationError, match="smallest, largest"):  # read from data
        validate(ProfileDomain, fields)


def test_point_prints_the_notes_after_its_table_and_in_its_json():
    argv = ("point", "--engine", "vllm", "--hardware", "b200", "--target", "qwen3-32b", "--drafter", "ngram",
            "--concurrency", "512")  # fmt: skip
    status, out, err = cli(*argv)
    assert status == 0, err
    last = out.rstrip("\n").splitlines()[-1]
    assert last.startswith("Outside the profile's data: ") and "b200 is outside its data" in last
    assert "above the largest batch the vllm profile was fitted on, 128" in last
    status, out, _ = cli(*argv, "--json")
    domain = json.loads(out)["domain"]
    assert domain["inside"] is False and len(domain["notes"]) == 3
    assert domain_line(tuple(domain["notes"])) == last


def test_point_inside_the_domain_prints_no_note():
    status, out, _ = cli("point", "--engine", "vllm", "--target", "llama-3.1-8b", "--drafter", "eagle3", "--json")
    assert status == 0 and json.loads(out)["domain"] == {"inside": True, "notes": []}
    status, out, _ = cli("point")  # the ideal engine
    assert status == 0 and "Outside the profile's data" not in out


def test_point_refuses_an_mtp_drafter_for_a_target_without_mtp_layers():
    status, out, err = cli("point", "--drafter", "mtp")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "qwen3-8b's config.json declares no multi-token-prediction layers (num_nextn_predict_layers)" in err
    assert "give --drafter eagle, eagle3, ngram or a draft model" in err


def test_the_model_still_prices_a_hypothetical_mtp_head():
    assert float(evaluate(drafter="mtp", target="qwen3-8b").speedup) > 0


def test_a_target_that_declares_mtp_layers_takes_an_mtp_drafter(monkeypatch):
    with_mtp = replace(get_architecture("qwen3-8b"), num_nextn_predict_layers=1)
    monkeypatch.setattr(drafters, "get_architecture", lambda key: with_mtp)
    check_declared_head("mtp", "qwen3-8b")
    check_declared_head("eagle3", "qwen3-8b")
