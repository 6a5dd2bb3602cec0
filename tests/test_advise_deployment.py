"""``advise`` prices the deployment the server's own files state: the model, the GPUs, the
drafter and the load read from a vLLM log, a scrape or a live server, settled against the
options (an option contradicting a file is refused, naming both), and nothing that identifies
the deployment defaulted silently. Fixtures: ``tests/data/vllm-deployments`` (vLLM's formats,
each cited to the vLLM source that prints it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FIXTURES = HERE / "data" / "vllm-deployments"
LLAMA_LOG = FIXTURES / "llama-3-70b-eagle-tp4.log"
MISTRAL = FIXTURES / "mistral-small-24b.prom"
BUSY = FIXTURES / "qwen3-8b-c256.prom"
CONFIGS = HERE / "data" / "configs"


def advise(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "specmodel", "advise", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def refused(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The one-line refusal, exit 2, containing every needle."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)
    return result.stderr


def test_the_70b_log_is_advised_as_llama_3_70b_on_four_gpus_with_eagle():
    result = advise("--log", str(LLAMA_LOG), "--hardware", "h100-sxm", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["target"], out["tensor_parallel"], out["drafter"], out["deployed_gamma"]) == (
        "llama-3-70b",
        4,
        "eagle",
        5,
    )
    assert "non-default args" in out["sources"]["model"] and "non-default args" in out["sources"]["tensor_parallel"]
    # the load the server ran: Running: 24, 32, 30, 16, 28 -> median 28, not a number from the command line
    assert out["concurrency"] == 28 and out["running_requests"]["max"] == 32 and out["observed_concurrency"]


def test_a_log_that_does_not_state_the_card_is_refused_with_what_to_give():
    refused(advise("--log", str(LLAMA_LOG)), "--hardware", "--hardware-file")


@pytest.mark.parametrize(
    ("option", "value", "stated"),
    [
        ("--tensor-parallel", "2", "tensor_parallel_size 4"),
        ("--target", "qwen3-8b", "model llama-3-70b"),
        ("--drafter", "ngram", "method eagle, gamma 5"),
    ],
)
def test_an_option_that_contradicts_the_log_is_refused_naming_both(option, value, stated):
    refused(advise("--log", str(LLAMA_LOG), "--hardware", "h100-sxm", option, value), f"{option} {value}", stated,
            "--override")  # fmt: skip


def test_override_lets_an_option_replace_what_the_log_states_and_says_so():
    result = advise("--log", str(LLAMA_LOG), "--hardware", "h100-sxm", "--tensor-parallel", "8", "--override", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["tensor_parallel"] == 8 and "--override" in out["sources"]["tensor_parallel"]


def test_a_concurrency_outside_what_the_server_ran_is_refused():
    refused(advise("--log", str(LLAMA_LOG), "--hardware", "h100-sxm", "--concurrency", "256"),
            "--concurrency 256", "16 to 32")  # fmt: skip


def test_the_mistral_scrape_is_refused_naming_its_model_never_advised_as_another():
    stderr = refused(advise("--metrics", str(MISTRAL), "--hardware", "h100-sxm", "--tensor-parallel", "1",
                            "--drafter", "ngram"), "Mistral-Small-24B-Instruct-2501", "--target")  # fmt: skip
    assert "qwen3" not in stderr.lower()


def test_a_model_in_the_local_hugging_face_cache_is_read_from_its_config(tmp_path):
    """A scrape naming a model outside the catalogue whose config.json the local Hugging Face
    cache holds (the layout ``huggingface_hub`` writes) is priced from that config."""
    snapshot = tmp_path / "hub" / "models--mistralai--Mistral-7B-v0.3" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    shutil.copy(CONFIGS / "mistralai--Mistral-7B-v0.3.json", snapshot / "config.json")
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("abc123")
    scrape = tmp_path / "scrape.prom"
    scrape.write_text(
        MISTRAL.read_text().replace("mistralai/Mistral-Small-24B-Instruct-2501", "mistralai/Mistral-7B-v0.3")
    )
    env = {"PATH": "/usr/bin:/bin", "HF_HUB_CACHE": str(tmp_path / "hub"), "PYTHONPATH": str(HERE.parent)}
    result = advise("--metrics", str(scrape), "--hardware", "h100-sxm", "--tensor-parallel", "1", "--drafter", "ngram",
                    "--json", env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["target"].startswith("mistral-7b-v0.3") and "model_name" in out["sources"]["model"]
    assert out["sources"]["kv_cache_dtype"].startswith("fp8")  # the scrape's cache_config_info
    assert out["target"].endswith("+fp8-kv")


def test_the_256_request_scrape_gets_a_gamma_at_the_lengths_it_states():
    """The server ran 256 requests: what it ran wins over the model's memory estimate, and the
    lengths are the scrape's means (502 prompt, 298 generated tokens), not assumed."""
    result = advise("--metrics", str(BUSY), "--hardware", "h100-sxm", "--tensor-parallel", "1",
                    "--drafter", "qwen3-0.6b", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["verdict"] != "does-not-fit" and out["recommended_gamma"] is not None
    assert (out["concurrency"], out["context"], out["generated_tokens"]) == (256, 502, 298)


def test_a_profile_used_outside_its_data_says_so_in_the_verdict():
    result = advise("--log", str(LLAMA_LOG), "--hardware", "mi300x", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["domain"]["inside"] is False
    assert any("mi300x" in note for note in out["domain"]["notes"])
    assert "outside the data it was fitted on" in out["reason"]


def test_an_mtp_drafter_is_refused_for_a_model_that_declares_no_mtp_layers():
    refused(advise("--metrics", str(BUSY), "--hardware", "h100-sxm", "--tensor-parallel", "1", "--drafter", "mtp"),
            "num_nextn_predict_layers")  # fmt: skip


def test_quantized_weights_are_priced_as_the_option_names_them():
    plain = advise("--log", str(LLAMA_LOG), "--hardware", "h100-sxm", "--json")
    fp8 = advise("--log", str(LLAMA_LOG), "--hardware", "h100-sxm", "--quantization", "fp8", "--json")
    assert plain.returncode == 0 and fp8.returncode == 0, fp8.stderr
    assert json.loads(fp8.stdout)["target"] == "llama-3-70b+fp8-weights"
    assert json.loads(plain.stdout)["predicted_speedup"] != json.loads(fp8.stdout)["predicted_speedup"]
