"""The deployment a vLLM server's own files state: its log, scrapes, bench results and
/v1/models, each value with where it was read; contradictions refused naming both."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from specmodel.errors import SpecModelError
from specmodel.server_runs.runs import load_runs
from specmodel.vllm.deployment import (
    Stated,
    deployment_from_bench,
    deployment_from_exposition,
    deployment_from_models,
    load_bench_deployment,
    load_exposition_deployment,
    merged,
    running_summary,
    stated,
)
from specmodel.vllm.engine_args import deployment_from_log, load_log_deployment
from specmodel.vllm.logs import load_log
from specmodel.vllm.prometheus import load_exposition

DATA = Path(__file__).parent / "data" / "vllm-deployments"
LOG, MISTRAL, QWEN, BENCH = (DATA / n for n in ("llama-3-70b-eagle-tp4.log", "mistral-small-24b.prom",
                                                 "qwen3-8b-c256.prom", "llama-3-70b-eagle-tp4-bench.json"))  # fmt: skip
LLAMA = "meta-llama/Meta-Llama-3-70B-Instruct"
PREFIX = "(APIServer pid=7) INFO 05-12 10:00:00 [utils.py:326] "


def test_the_llama_log_states_its_deployment_with_sources():
    d = load_log_deployment(LOG)
    assert d.model == Stated(LLAMA, f"--log '{LOG}' line 2 (non-default args)")
    assert d.tensor_parallel_size is not None and d.tensor_parallel_size.value == 4
    assert d.speculative_config is not None and d.speculative_config.value == {
        "method": "eagle", "model": "yuhuili/EAGLE-LLaMA3-Instruct-70B", "num_speculative_tokens": 5}  # fmt: skip
    assert d.dtype is not None and d.dtype.value == "bfloat16" and "line 4 (engine config)" in d.dtype.where
    assert d.max_model_len is not None and d.max_model_len.value == 8192
    assert d.gpu_memory_utilization is not None and d.gpu_memory_utilization.value == 0.92
    assert d.kv_cache_dtype is not None and d.kv_cache_dtype.value == "auto"
    assert d.engine_version is not None and d.engine_version.value == "0.10.1"
    assert d.served_model_name is not None and d.served_model_name.value == LLAMA
    assert d.quantization is None and d.engine_args_where == f"--log '{LOG}' line 2"
    assert d.running is not None and d.running.value == (24, 32, 30, 16, 28) and "5 stats lines" in d.running.where
    assert d.mean_prompt_tokens is None  # the log's stats lines state no lengths
    assert load_log(LOG).gamma == 5  # the same file's acceptance reads as before
    assert deployment_from_log(LOG.read_text(), f"--log '{LOG}'") == d


def test_the_mistral_scrape_states_model_load_and_cache_config():
    d = load_exposition_deployment(MISTRAL)
    assert d.served_model_name is not None and d.served_model_name.value == "mistralai/Mistral-Small-24B-Instruct-2501"
    assert (
        d.kv_cache_dtype is not None
        and d.kv_cache_dtype.value == "fp8"
        and "vllm:cache_config_info" in (d.kv_cache_dtype.where)
    )
    assert d.gpu_memory_utilization is not None and d.gpu_memory_utilization.value == 0.9
    assert d.block_size is not None and d.block_size.value == 16
    assert d.num_gpu_blocks is not None and d.num_gpu_blocks.value == 10240
    assert d.running is not None and d.running.value == (12.0,)
    assert load_exposition(MISTRAL).gamma == 3


def test_the_qwen_scrapes_state_256_running_and_the_mean_lengths_of_the_window():
    d = load_exposition_deployment(QWEN)
    assert d.running is not None and d.running.value == (256.0, 256.0) and "2 scrapes" in d.running.where
    assert d.mean_prompt_tokens is not None and d.mean_prompt_tokens.value == pytest.approx(502)
    assert d.mean_generated_tokens is not None and d.mean_generated_tokens.value == pytest.approx(298)
    assert "increase over 2 scrapes" in d.mean_prompt_tokens.where
    assert load_exposition(QWEN).num_drafts == 20000  # the acceptance of the same window


def test_the_bench_file_states_its_metadata_and_load():
    d = load_bench_deployment(BENCH)
    assert d.tensor_parallel_size is not None and d.tensor_parallel_size.value == 4
    assert d.hardware is not None and d.hardware.value == "h100-sxm"
    assert d.speculative_config is not None and d.speculative_config.value == {
        "method": "eagle",
        "num_speculative_tokens": 5,
    }
    assert d.running is not None and d.running.value == (32.0,)
    assert d.mean_prompt_tokens is not None and d.mean_prompt_tokens.value == 524
    assert d.mean_generated_tokens is not None and d.mean_generated_tokens.value == 256
    assert load_runs([BENCH])[0].num_speculative_tokens == 5


def test_the_log_and_bench_of_one_run_merge():
    d = merged(load_log_deployment(LOG), load_bench_deployment(BENCH))
    assert d.running is not None and d.running.value == (24, 32, 30, 16, 28, 32)
    assert d.hardware is not None and d.tensor_parallel_size is not None and d.tensor_parallel_size.value == 4
    assert running_summary(d.running.value).median == 29


def test_a_contradiction_between_files_is_refused_naming_both():
    record = json.loads(BENCH.read_text())
    with pytest.raises(SpecModelError) as err:
        merged(
            load_log_deployment(LOG), deployment_from_bench([{**record, "tensor_parallel_size": "8"}], "--bench b.json")
        )
    message = str(err.value)
    assert "\n" not in message and "line 2 (non-default args) states tensor_parallel_size 4" in message
    assert "--bench b.json states 8" in message


def test_two_engine_args_lines_that_disagree_are_refused_naming_both():
    text = LOG.read_text().replace("tensor_parallel_size=4,", "tensor_parallel_size=8,")
    with pytest.raises(
        SpecModelError, match=r"line 2 \(non-default args\) .* 4, but log line 4 \(engine config\) states 8"
    ):
        deployment_from_log(text, "log")


def test_speculative_configs_agreeing_on_shared_keys_combine():
    a = stated("a", speculative_config={"model": "d", "num_speculative_tokens": 3})
    b = stated("b", speculative_config={"method": "draft_model", "model": "d"})
    combined = merged(a, b).speculative_config
    assert combined is not None and combined.value == {
        "model": "d",
        "num_speculative_tokens": 3,
        "method": "draft_model",
    }
    with pytest.raises(SpecModelError, match="states speculative_config"):
        merged(a, stated("c", speculative_config={"num_speculative_tokens": 5}))


def test_older_log_layouts_are_read():
    text = "\n".join(
        [
            "INFO 01-02 03:04:05 api_server.py:212] vLLM API server version 0.6.3",
            "INFO 01-02 03:04:06 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: model='m/x', "
            "speculative_config=SpeculativeConfig(draft_model='m/d', num_spec_tokens=4), tokenizer='m/x', "
            "dtype=torch.float16, max_seq_len=4096, tensor_parallel_size=2,"
            " quantization=awq_marlin, kv_cache_dtype=fp8, served_model_name=x, "
            "chunked_prefill_enabled=False multi_step_stream_outputs=True, mm_processor_kwargs=None)",
            "INFO 01-02 03:05:00 metrics.py:349] Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 50.1 "
            "tokens/s, Running: 7 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 5.0%, "
            "CPU KV cache usage: 0.0%.",
            f"{PREFIX}non-default args: {{'quantization': 'awq', 'dtype': 'half', 'served_model_name': ['x', 'y']}}",
        ]
    )
    d = deployment_from_log(text, "log")
    assert d.speculative_config is not None and d.speculative_config.value == {
        "model": "m/d",
        "num_speculative_tokens": 4,
    }
    assert d.quantization is not None and d.quantization.value == "awq_marlin"  # the kernel vLLM chose for awq
    assert d.dtype is not None and d.dtype.value == "float16" and d.served_model_name is not None
    assert d.running is not None and d.running.value == (7.0,) and d.tensor_parallel_size is not None


def test_each_engine_of_a_data_parallel_server_is_a_sample_of_its_own():
    """Under data parallelism every engine is a replica with its own batch: its Running count
    is one sample, not a share of a sum."""
    line = (
        "INFO 05-12 10:00:00 [loggers.py:123] Engine {:03d}: Avg prompt throughput: 1.0 tokens/s, Avg generation "
        "throughput: 1.0 tokens/s, Running: {} reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
        "Prefix cache hit rate: 0.0%"
    )
    text = "\n".join(line.format(e, r) for e, r in [(0, 3), (1, 5), (0, 4), (1, 6)])
    running = deployment_from_log(text, "log").running
    assert running is not None and running.value == (3.0, 5.0, 4.0, 6.0)


@pytest.mark.parametrize("line, needle", [
    ("non-default args: {'model': 'x', ", "not a Python dict literal"),
    ("non-default args: ['model']", "expected a dict"),
    ("non-default args: {'tensor_parallel_size': 'four'}", "'four' is not a positive whole number"),
    ("non-default args: {'speculative_config': 5}", "speculative_config=5 is not a dict"),
    ("Initializing a V1 LLM engine (v0.10.1) with config: model='x', tensor_parallel_size=four", "=<integer>"),
    ("Initializing a V1 LLM engine (v0.10.1) with config: tokenizer='x'", "no model=... field"),
    ("Initializing a V1 LLM engine (v0.10.1) with config: model='x', speculative_config=Spec(method=eagle)",
     "is not SpeculativeConfig"),
    ("Engine 000: Avg prompt throughput: 1.0 tokens/s, Running: many reqs", "no 'Running: <integer> reqs'"),
])  # fmt: skip
def test_malformed_engine_args_lines_are_refused_in_one_line(line, needle):
    with pytest.raises(SpecModelError) as err:
        deployment_from_log("ok\n" + PREFIX + line, "--log v.log")
    assert needle in str(err.value) and "\n" not in str(err.value) and str(err.value).startswith("--log v.log line 2")


def test_several_models_in_a_scrape_need_a_choice():
    text = MISTRAL.read_text() + 'vllm:num_requests_running{engine="0",model_name="other"} 3.0\n'
    with pytest.raises(SpecModelError, match="2 models .* choose one with --model-name"):
        deployment_from_exposition(text, "--metrics m.prom")
    chosen = deployment_from_exposition(text, "--metrics m.prom", model_name="other")
    assert chosen.running is not None and chosen.running.value == (3.0,)


def test_a_scrape_without_vllm_series_is_refused():
    with pytest.raises(SpecModelError, match="no vllm: series"):
        deployment_from_exposition("python_gc_objects_collected_total 3.0\n", "--metrics m.prom")


def test_models_answer_states_served_name_root_and_length():
    answer = {"object": "list", "data": [
        {"id": "llama", "object": "model", "created": 1, "owned_by": "vllm", "root": LLAMA, "parent": None,
         "max_model_len": 8192, "permission": []},
        {"id": "sql-lora", "object": "model", "created": 1, "owned_by": "vllm", "root": "/adapters/sql",
         "parent": "llama", "max_model_len": None, "permission": []}]}  # fmt: skip
    d = deployment_from_models(json.dumps(answer), "/v1/models")
    assert d.served_model_name is not None and d.served_model_name.value == "llama"
    assert d.model is not None and d.model.value == LLAMA and d.max_model_len is not None
    for bad in ("<html></html>", '{"object": "list", "data": [{"id": 3}]}', '{"data": []}',
                '{"object": "list", "data": [{"id": "x", "object": "model"}]}'):  # fmt: skip
        with pytest.raises(SpecModelError):
            deployment_from_models(bad, "/v1/models")


def test_bench_metadata_of_the_wrong_kind_is_refused():
    record = json.loads(BENCH.read_text())
    with pytest.raises(SpecModelError, match="metadata tensor_parallel_size='four' is not a positive whole number"):
        deployment_from_bench([{**record, "tensor_parallel_size": "four"}], "--bench b.json")
    runs = deployment_from_bench([record, {**record, "max_concurrency": 8}], "--bench b.json")
    assert runs.running is not None and runs.running.value == (32.0, 8.0)


def test_running_summary_and_an_empty_load():
    assert running_summary([256, 256]).p90 == 256
    with pytest.raises(SpecModelError, match="no samples"):
        running_summary([])
    assert replace(stated("x"), running=None).running is None
