"""The sweep and the cohort: an output that is not a regular file is refused and
left alone, a replaced file keeps its mode, a mean acceptance length that some gammas cannot
reach sweeps the others, the chunked file is the one-shot table, and the cohort costs O(G)
while giving the O(G^2) recursion's numbers."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from specmodel import evaluate
from specmodel.cli import main
from specmodel.cli.sweep import write_atomically
from specmodel.errors import SpecModelError
from specmodel.grid import SweepPlan, chunk_axes, plan_sweep, sweep
from specmodel.model import acceptance as acc
from specmodel.model import cohort
from specmodel.model.timing import smooth_pass_time_sum
from tests.cohort_reference import dense, iteration_survival

SMALL = {"concurrency": [1, 4, 64], "gamma": [1, 3], "context": [256, 2048], "alpha": [0.6, 0.8]}
#: A smaller grid still, for a chunk per scenario: two of everything (but three concurrencies).
TINY = {**SMALL, "drafter": ["qwen3-0.6b", "ngram"], "tensor_parallel": [1, 2]}


def _pmf(alpha, gamma, ratio=1.0):
    return acc.tokens_per_iteration_pmf(acc.per_position_acceptance(alpha, gamma, ratio))


def _snapshot(path: Path) -> tuple:
    st = os.lstat(path)
    content = path.read_bytes() if stat.S_ISREG(st.st_mode) else os.readlink(path) if path.is_symlink() else None
    return stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, content


@pytest.fixture
def no_computing(monkeypatch):
    monkeypatch.setattr("specmodel.grid.plan_sweep", lambda *a, **k: pytest.fail("computed before checking"))


# --- the output file ------------------------------------------------------------------------


def test_a_symlink_is_refused_and_left_as_it_was(tmp_path, capsys, no_computing):
    target = tmp_path / "real.csv"
    target.write_text("mine\n")
    link = tmp_path / "grid.csv"
    link.symlink_to(target)
    before = _snapshot(link), _snapshot(target)
    assert main(["sweep", "--out", str(link)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "symbolic link" in err
    assert (_snapshot(link), _snapshot(target)) == before


def test_a_dangling_symlink_is_refused(tmp_path, capsys, no_computing):
    link = tmp_path / "grid.parquet"
    link.symlink_to(tmp_path / "nowhere.parquet")
    assert main(["sweep", "--out", str(link)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert link.is_symlink() and not (tmp_path / "nowhere.parquet").exists()


def test_a_fifo_is_refused_and_left_as_it_was(tmp_path, capsys, no_computing):
    fifo = tmp_path / "grid.csv"
    os.mkfifo(fifo, 0o640)
    before = _snapshot(fifo)
    assert main(["sweep", "--out", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file" in err
    assert _snapshot(fifo) == before and sorted(tmp_path.iterdir()) == [fifo]


def test_a_device_is_refused(capsys, no_computing):
    assert main(["sweep", "--out", "/dev/null.csv"]) == 2  # its folder is /dev
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("name", ["a" * 300 + ".csv", "plain-file/grid.csv"])
def test_a_path_the_system_cannot_name_is_one_line(tmp_path, capsys, no_computing, name):
    (tmp_path / "plain-file").write_text("mine\n")
    assert main(["sweep", "--out", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("too long" in err or "not a folder" in err), err
    assert (tmp_path / "plain-file").read_text() == "mine\n"


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_replaced_file_keeps_its_mode(tmp_path, suffix):
    out = tmp_path / f"grid{suffix}"
    out.write_text("old")
    out.chmod(0o600)
    write_atomically(iter([pd.DataFrame({"a": [1.0, 2.5]})]), out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_bytes() != b"old" and sorted(tmp_path.iterdir()) == [out]


def test_a_new_file_gets_the_umasks_mode(tmp_path):
    out = tmp_path / "grid.csv"
    mask = os.umask(0o027)
    try:
        write_atomically(iter([pd.DataFrame({"a": [1]})]), out)
    finally:
        os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_a_file_that_turns_into_a_symlink_while_computing_is_not_replaced(tmp_path):
    out, target = tmp_path / "grid.csv", tmp_path / "elsewhere.csv"
    target.write_text("mine")

    def frames():
        yield pd.DataFrame({"a": [1]})
        out.symlink_to(target)

    with pytest.raises(SpecModelError, match="symbolic link"):
        write_atomically(frames(), out)
    assert out.is_symlink() and target.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.csv", "grid.csv"]


def test_an_error_while_computing_leaves_nothing(tmp_path):
    def frames():
        yield pd.DataFrame({"a": [1]})
        raise SpecModelError("bad value")

    with pytest.raises(SpecModelError):
        write_atomically(frames(), tmp_path / "grid.parquet")
    assert list(tmp_path.iterdir()) == []


# --- a mean acceptance length some gammas cannot reach ---------------------------------------


def test_the_articles_mean_acceptance_length_sweeps_the_gammas_that_reach_it():
    plan = plan_sweep(mean_acceptance_length=2.61)
    assert plan.axes["gamma"].tolist() == list(range(2, 11))
    assert plan.notes == (
        "gamma 1 cannot reach a mean acceptance length of 2.61 (at most gamma + 1 = 2); swept gamma 2..10",
    )


def test_the_cli_says_which_gammas_it_left_out(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(SweepPlan, "column_chunks", lambda self, rows=0: iter([{"gamma": np.array([2])}]))
    out = tmp_path / "grid.csv"
    assert main(["sweep", "--out", str(out), "--mean-acceptance-length", "2.61"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gamma 1 cannot reach a mean acceptance length of 2.61" in err
    assert out.read_text() == "gamma\n2\n"


def test_a_mean_no_gamma_can_reach_is_refused(tmp_path, capsys):
    out = tmp_path / "grid.csv"
    assert main(["sweep", "--out", str(out), "--mean-acceptance-length", "11.5"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SpecModelError, match="no gamma"):
        plan_sweep(mean_acceptance_length=4.5, gamma=[1, 2, 3])


def test_gammas_left_out_are_named_one_by_one():
    plan = plan_sweep(mean_acceptance_length=4.5, gamma=[1, 2, 3, 5, 9])
    assert plan.axes["gamma"].tolist() == [5, 9]
    assert plan.notes[0].startswith("gamma 1..3 cannot reach") and plan.notes[0].endswith("swept gamma 5, 9")


# --- chunks ----------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [1, 7, 50, 10**9])
def test_chunks_in_order_are_the_one_shot_table(rows):
    plan = plan_sweep(**TINY)
    chunked = pd.concat(list(plan.frames(rows)), ignore_index=True)
    pd.testing.assert_frame_equal(chunked, sweep(**TINY), check_exact=True)


def test_chunks_cut_the_outermost_axes_first():
    axes = {"a": np.arange(3), "b": np.arange(4), "c": np.arange(5)}
    assert [[len(v) for v in c.values()] for c in chunk_axes(axes, 10)] == [[1, 2, 5]] * 6
    assert [[len(v) for v in c.values()] for c in chunk_axes(axes, 40)] == [[2, 4, 5], [1, 4, 5]]
    assert len(chunk_axes(axes, 1)) == 60 and len(chunk_axes(axes, 60)) == 1


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_chunked_file_is_the_one_pandas_writes(tmp_path, suffix):
    whole = sweep(**SMALL)
    old, new = tmp_path / f"old{suffix}", tmp_path / f"new{suffix}"
    if suffix == ".csv":
        whole.to_csv(old, index=False)
    else:
        whole.to_parquet(old, index=False)
    assert write_atomically(plan_sweep(**SMALL).frames(20), new) == len(whole)
    if suffix == ".parquet":
        assert pq.read_table(old).equals(pq.read_table(new))
        assert pq.read_schema(old).equals(pq.read_schema(new), check_metadata=True)
    else:
        assert old.read_bytes() == new.read_bytes()  # pyarrow's CSV, formatted as pandas formats it


def test_csv_numbers_are_formatted_as_pandas_formats_them(tmp_path):
    values = [1.0, -3.0, 0.1, 1 / 3, 2.5e-7, 1e-5, 4.125626943549677e-05, -1e-6, 1.5e-6, 1e-4, 9.99e-5]
    values += [1e20, 1e16, 123456.0, -0.0, 0.0, float("inf"), float("nan")]
    frame = pd.DataFrame({"x": values, "ok": [True, False] * 9, "name": ["eagle-32k", "a.b"] * 9})
    old, new = tmp_path / "old.csv", tmp_path / "new.csv"
    frame.to_csv(old, index=False)
    write_atomically(iter([frame.iloc[:7], frame.iloc[7:]]), new)
    assert old.read_text() == new.read_text()


# --- the cohort: O(G), the O(G^2) recursion's numbers -----------------------------------------


def _reference_survival(pmf, g):
    """The O(G^2) recursion: P_0 = delta_0, P_k[t] = sum_x pmf[x] P_{k-1}[t - x] over t < G,
    S_{k+1} = sum_t P_k[t]."""
    unfinished = np.zeros(g)
    unfinished[0] = 1.0
    survival = np.zeros(g)
    for k in range(g):
        survival[k] = min(unfinished.sum(), 1.0)
        step = np.zeros(g)
        for x in range(1, min(len(pmf), g - 1) + 1):
            step[x:] += pmf[x - 1] * unfinished[: g - x]
        unfinished = step
    return survival


def _reference_sum(survival, batch, term):
    """``sum_i P(i runs) term(A_i)`` iteration by iteration over the dense survival."""
    with np.errstate(divide="ignore"):
        runs = -np.expm1(batch * np.log1p(-survival))
    active = np.where(runs > 0, batch * survival / np.where(runs > 0, runs, 1.0), 0.0)
    return float(np.sum(runs * term(active))), float(np.sum(runs))


CASES = [(0.75, 4, 0.85), (0.5, 1, 1.0), (0.95, 10, 1.0), (0.3, 10, 0.5), (0.99, 10, 1.0), (0.6, 3, 0.9)]


@pytest.mark.parametrize("g", [3, 40, 256, 1024])
@pytest.mark.parametrize("alpha, gamma, ratio", CASES)
def test_survival_equals_the_quadratic_recursion(alpha, gamma, ratio, g):
    pmf = _pmf(alpha, gamma, ratio)
    reference = _reference_survival(pmf, g)
    fast = iteration_survival(pmf, g)
    assert np.abs(fast - reference).max() < 1e-12
    assert float(cohort.expected_iterations(fast)) == pytest.approx(reference.sum(), rel=1e-12)


@pytest.mark.parametrize("batch", [1, 8, 256])
@pytest.mark.parametrize("alpha, gamma, ratio", CASES[:4])
def test_cohort_sums_equal_the_iteration_by_iteration_sums(alpha, gamma, ratio, batch):
    g = 512
    pmf = _pmf(alpha, gamma, ratio)
    table = cohort.CohortTable(cohort.survival_window(pmf[None], g), np.array([batch]))
    row = np.array([0])
    m0, m1, c1, p = 3e-3, 2e-6, 5e-5, 2.2

    def roofline(a):
        return np.maximum(m0 + m1 * a, c1 * a)

    def smooth(a):
        return ((m0 + m1 * a) ** p + (c1 * a) ** p) ** (1 / p)

    reference = _reference_survival(pmf, g)
    expected, runs = _reference_sum(reference, batch, roofline)
    assert float(cohort.expected_pass_time_sum(table, row, m0, m1, c1)[0]) == pytest.approx(expected, rel=1e-9)
    assert float(table.total_runs(row)[0]) == pytest.approx(runs, rel=1e-9)
    expected_smooth, _ = _reference_sum(reference, batch, smooth)
    fast = smooth_pass_time_sum(table, row, np.array([m0]), np.array([m1]), np.array([c1]), np.array([p]))
    assert float(fast[0]) == pytest.approx(expected_smooth, rel=1e-9)


def test_a_survival_row_does_not_depend_on_the_rows_beside_it():
    pmf = _pmf(np.array([0.6, 0.8, 0.6, 0.95]), np.array([1, 1, 3, 10]), 1.0)
    together = cohort.window_survival(pmf, 2048)
    for r in range(len(pmf)):
        alone = cohort.window_survival(pmf[r : r + 1], 2048)
        assert together.start[r] == alone.start[0]
        width = alone.window.shape[1]
        assert np.array_equal(together.window[r, :width], alone.window[0])
        assert not together.window[r, width:].any()


def test_a_point_at_65536_generated_tokens_runs_and_keeps_the_identities():
    g = 65_536
    point = {"target": "llama-3.1-8b", "drafter": "llama-3.2-1b", "context": 1024, "generated_tokens": g}
    ev = evaluate(**point, concurrency=[1, 64])
    iterations, tokens = ev.expected_iterations, ev.mean_acceptance_length
    assert np.all(g <= iterations * tokens) and np.all(iterations * tokens <= g + 4 + 1e-6)  # Wald, gamma 4
    assert np.all(np.isfinite(ev.speedup)) and np.all(ev.speedup > 0)
    vllm = evaluate(**point, concurrency=64, engine="vllm", batching="cohort")
    assert np.isfinite(vllm.speedup) and vllm.speedup > 0
    # one sequence's cohort: iteration i runs with probability S_i, so the runs sum to E[N]
    pmf = _pmf(0.75, 4, 0.85)
    survival = cohort.survival_window(pmf[None], g)
    table = cohort.CohortTable(survival, np.array([1]))
    assert float(table.total_runs(np.array([0]))[0]) == pytest.approx(float(survival.expected_iterations()[0]))
    s = dense(survival)[0]
    assert s[0] == 1.0 and np.all(np.diff(s) <= 1e-13) and s.min() >= 0.0  # FFT round-off
    # E[N] grows with G, by about G / E[X] (renewal theorem)
    half = cohort.survival_window(pmf[None], g // 2).expected_iterations()[0]
    mean_x = float(np.dot(np.arange(1, 6), pmf))
    assert survival.expected_iterations()[0] - half == pytest.approx(g / 2 / mean_x, abs=1.0)
