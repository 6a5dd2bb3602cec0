"""``specmodel sweep``'s axis options: lists and ranges, one parser for every axis; a bad item
refused in one line naming it; an axis not given keeps the default grid's values; several cards
or targets each a block of rows led by a column naming it; and the file is the one pandas writes
for the same grid."""

from __future__ import annotations

import argparse

import pandas as pd
import pyarrow.parquet as pq
import pytest

from specmodel.cli import main
from specmodel.cli.sweep import parse_axis
from specmodel.grid import sweep

#: A small grid given on the command line, and the same as :func:`specmodel.grid.sweep`'s arguments.
OPTIONS = ["--concurrency", "8,16", "--gamma", "1-2", "--context", "1024", "--drafter", "eagle,ngram",
           "--alpha", "0.6", "--acceptance", "same", "--engine", "ideal,vllm", "--tensor-parallel", "1,2"]  # fmt: skip
AXES = {"concurrency": [8, 16], "gamma": [1, 2], "context": [1024], "drafter": ["eagle", "ngram"], "alpha": [0.6],
        "acceptance": ["same"], "engine": ["ideal", "vllm"], "tensor_parallel": [1, 2]}  # fmt: skip


def test_lists_and_inclusive_ranges():
    assert parse_axis("8,16,32", "whole") == (8, 16, 32)
    assert parse_axis("1-4", "whole") == (1, 2, 3, 4)
    assert parse_axis(" 1, 4-6 ,9", "whole") == (1, 4, 5, 6, 9)
    assert parse_axis("0.5,0.75", "decimal") == (0.5, 0.75)
    assert parse_axis("qwen3-0.6b,eagle", "name") == ("qwen3-0.6b", "eagle")  # a dash in a name is no range


@pytest.mark.parametrize(
    ("text", "kind", "needle"),
    [
        ("1-x", "whole", "item '1-x'"),
        ("8,,16", "whole", "is empty"),
        ("4-1", "whole", "item '4-1'"),
        ("1-100000", "whole", "item '1-100000'"),
        ("0.5,abc", "decimal", "item 'abc'"),
        ("falling,bogus", "profile", "item 'bogus'"),
        ("2,1-3", "whole", "is given twice"),
    ],
)
def test_a_bad_item_is_named(text, kind, needle):
    with pytest.raises(argparse.ArgumentTypeError, match=needle):
        parse_axis(text, kind)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--gamma", "1-x"], "--gamma: item '1-x'"),
        (["--concurrency", "8,,16"], "--concurrency: an item"),
        (["--acceptance", "falling,bogus"], "item 'bogus'"),
        (["--alpha", "0.5,nan"], "item 'nan'"),
        (["--tensor-parallel", "1,٢"], "--tensor-parallel"),
        (["--drafter", "eagle,nosuch"], "nosuch"),
        (["--hardware", "h100-sxm,nosuch"], "nosuch"),
    ],
)
def test_bad_axis_options_are_one_line(tmp_path, capsys, args, needle):
    out = tmp_path / "grid.csv"
    assert main(["sweep", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err
    assert not out.exists()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_axes_given_are_swept_and_written_as_pandas_writes_them(tmp_path, capsys, suffix):
    new, old = tmp_path / f"new{suffix}", tmp_path / f"old{suffix}"
    assert main(["sweep", "--out", str(new), *OPTIONS]) == 0
    assert "wrote 32 scenarios" in capsys.readouterr().out
    whole = sweep(**AXES)
    if suffix == ".csv":
        whole.to_csv(old, index=False)
        assert new.read_bytes() == old.read_bytes()
    else:
        whole.to_parquet(old, index=False)
        assert pq.read_table(new).equals(pq.read_table(old))
        assert pq.read_schema(new).equals(pq.read_schema(old), check_metadata=True)


def test_an_axis_not_given_keeps_the_default_grid(tmp_path, capsys):
    out = tmp_path / "grid.parquet"
    assert main(["sweep", "--out", str(out), "--concurrency", "64", "--gamma", "4", "--context", "2048"]) == 0
    frame = pd.read_parquet(out)
    assert set(frame.alpha) == {round(0.5 + 0.05 * i, 2) for i in range(10)}
    assert set(frame.engine) == {"ideal", "vllm"} and set(frame.tensor_parallel) == {1, 2, 4, 8}
    assert len(frame) == 8 * 2 * 10 * 2 * 4  # eight drafters serve qwen3-8b


def test_several_cards_and_targets_lead_their_rows(tmp_path, capsys):
    out = tmp_path / "grid.csv"
    small = ["--concurrency", "8", "--gamma", "2", "--context", "1024", "--alpha", "0.6", "--acceptance", "same",
             "--engine", "ideal", "--tensor-parallel", "1", "--drafter", "ngram"]  # fmt: skip
    assert main(["sweep", "--out", str(out), *small, "--hardware", "h100-sxm,l40s",
                 "--target", "qwen3-8b,llama-3.1-8b"]) == 0  # fmt: skip
    frame = pd.read_csv(out)
    assert list(frame.columns[:3]) == ["hardware", "target", "concurrency"]
    assert list(zip(frame.hardware, frame.target, strict=True)) == [
        ("h100-sxm", "qwen3-8b"), ("h100-sxm", "llama-3.1-8b"), ("l40s", "qwen3-8b"), ("l40s", "llama-3.1-8b")
    ]  # fmt: skip
    axes = {"concurrency": [8], "gamma": [2], "context": [1024], "alpha": [0.6], "acceptance": ["same"],
            "engine": ["ideal"], "tensor_parallel": [1], "drafter": ["ngram"]}  # fmt: skip
    one = sweep(hardware="l40s", target="llama-3.1-8b", **axes)
    assert frame.iloc[3]["speedup"] == pytest.approx(float(one["speedup"].iloc[0]), rel=1e-15)


def test_one_engine_card_and_target_keep_working_as_before(tmp_path, capsys):
    out = tmp_path / "grid.csv"
    args = ["--engine", "vllm", "--hardware", "l40s", "--target", "llama-3.1-8b", "--concurrency", "8", "--gamma", "2"]
    assert main(["sweep", "--out", str(out), *args]) == 0
    frame = pd.read_csv(out)
    assert "hardware" not in frame and set(frame.engine) == {"vllm"}
