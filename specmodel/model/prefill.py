"""Where a steady batch's prefill goes: the prompts of the sequences that replace finished
ones, in the passes that also decode.

In a steady batch of B sequences that each output x tokens per pass and G tokens in all,
``B x / G`` sequences finish per pass on average, and as many prompts of T tokens are
prefilled. How that work lands on the passes depends on the scheduler:

* spread evenly (``token_budget`` None), every pass carries ``B x T / G`` prompt tokens;
* as vLLM V1 schedules it, a waiting prompt is prefilled whole, up to what the token budget
  per pass (``max_num_batched_tokens``, 8192 by default for the OpenAI server on a GPU of
  70 GiB or more, ``vllm/engine/arg_utils.py`` of v0.10.1) leaves after the running
  sequences' own tokens (``vllm/v1/core/sched/scheduler.py``: running requests are scheduled
  first, then each waiting one gets ``min(remaining prompt, remaining budget)`` tokens). So
  most passes decode alone and a few carry a whole chunk of a prompt, which in a decode pass
  that is bound by memory costs its full arithmetic time instead of hiding under the weight
  reads.

Chunked prefill itself: Agrawal et al., Sarathi-Serve, arXiv:2403.02310, Sec. 4.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from specmodel.model.types import FloatArray, Numeric


def prompts_per_pass(batch: Numeric, tokens_per_pass: Numeric, generated_tokens: Numeric) -> Numeric:
    """Prompts prefilled per pass in a steady batch: ``lambda = B x / G``, the sequences that
    finish per pass when each of B outputs x tokens per pass and G in all (Little's law).

    >>> float(prompts_per_pass(128, 2.0, 256))
    1.0
    """
    return np.multiply(batch, tokens_per_pass) / generated_tokens


def prefill_chunk(prompt_tokens: Numeric, token_budget: Numeric, scheduled_tokens: Numeric) -> Numeric:
    """Prompt tokens one pass prefills at once: ``c = min(T, max(C - s, 1))``, the whole prompt
    of T tokens if the token budget C leaves room for it after the s tokens the running
    sequences schedule (B for plain decoding, B (1 + gamma) for a verify pass), else what is
    left (at least one token). Tokens, as floats.

    >>> prefill_chunk(838, 8192, 128 * 4), prefill_chunk(20000, 8192, 512)
    (838.0, 7680.0)
    """
    left = np.maximum(np.subtract(token_budget, scheduled_tokens), 1.0)
    chunk = np.minimum(np.asarray(prompt_tokens, dtype=float), left)
    return float(chunk) if chunk.ndim == 0 else chunk


def mean_pass_time(
    time_with: Callable[[Numeric], FloatArray],
    prompts: Numeric,
    prompt_tokens: Numeric,
    flops_per_prompt_token: Numeric,
    chunk: Numeric,
) -> FloatArray:
    """Mean time of a pass that carries the prefill of ``prompts`` prompts of T tokens on average
    (``time_with(f)``: the pass's time with f prefill FLOPs folded in).

    The prefill arrives in chunks of c tokens, ``n = lambda T / c`` of them per pass on average,
    and a pass carries ``floor(n)`` or ``floor(n) + 1`` of them, in the shares that give the mean
    n (``phi = n - floor(n)`` of the passes carry one more):
    ``t = (1 - phi) t(floor(n) c f) + phi t((floor(n) + 1) c f)``, f the FLOPs per prompt token.
    A chunk of NaN means spread evenly: ``t(lambda T f)``; a prompt of no tokens has no chunks.
    Either way the prefill FLOPs per pass are ``lambda T f``; only how they meet the memory time
    differs. Seconds.
    """
    work = np.multiply(np.multiply(prompts, prompt_tokens), flops_per_prompt_token)
    even = np.isnan(chunk)
    if np.all(even):
        return np.asarray(time_with(work), dtype=float)
    tokens, c = np.broadcast_arrays(np.multiply(prompts, prompt_tokens), np.where(even, 0.0, chunk))
    chunks = np.divide(tokens, c, out=np.zeros(np.shape(tokens)), where=c > 0)  # no prompt, no chunk
    whole = np.floor(chunks)
    more = chunks - whole
    per_chunk = np.multiply(c, flops_per_prompt_token)
    lumpy = (1.0 - more) * time_with(whole * per_chunk) + more * time_with((whole + 1.0) * per_chunk)
    if not np.any(even):
        return np.asarray(lumpy, dtype=float)
    return np.asarray(np.where(even, time_with(work), lumpy), dtype=float)
