"""Named modelling choices, each with the reason for its value.

These are the only free numbers in the model. They were chosen once, for all scenarios,
against ``tests/data/calibration.csv`` (the figures the article quotes); the calibration
page of the docs shows the residual of every row. No scenario gets its own correction.
"""

#: Achievable fraction of peak HBM bandwidth for a decode pass. The article's verify pass
#: moves 15.56 GiB in 6.23 ms at 1 sequence, i.e. 2.68 TB/s = 0.80 of the H100's 3.35 TB/s,
#: in line with what tuned decode kernels reach on Hopper.
MEMORY_EFFICIENCY = 0.80

#: Achievable fraction of dense BF16 peak for the pass's matrix multiplies. The article's
#: 0.09 TFLOP verify pass takes 0.12 ms, i.e. about 0.75 of 989.4 TFLOP/s; the same value
#: places the verify pass's idle share at 62 % (32 sequences), 45 % (64) and 5 % (1024).
COMPUTE_EFFICIENCY = 0.75

#: Output tokens each sequence generates in the article's scenario.
GENERATED_TOKENS = 256

#: Share of the generated length that the average pass finds in the cache beyond the
#: prompt. Cache reads grow linearly while a sequence generates, so the mean pass reads
#: the cache at context + G/2; this reproduces the article's 15.6 GiB verify pass.
KV_READ_FRACTION = 0.5

#: Multiply-adds count 2 FLOPs; we charge them on every weight read, embedding table
#: included, as the article does ("about two FLOPs per weight read"). Strictly the input
#: embedding is a gather; leaving it out would put the verify pass at 0.082 TFLOP,
#: outside the article's 0.09 +/- 0.005.
FLOPS_PER_PARAMETER = 2

#: Ratio r of the `falling` acceptance profile: conditional acceptance at draft position j
#: is alpha * r ** (j - 1), so each guess further out is accepted r times as often as the
#: one before, given that one was. 0.85 is the least-squares fit (0.852, rounded) to the
#: article's unconditional per-position acceptance 0.751, 0.477, 0.261, 0.123 at alpha 0.75,
#: gamma 4. The decay does not vanish as alpha grows: even a drafter that nails the next
#: token drifts further out, which is why a 1.7B draft at a fantasy alpha 0.95 still loses
#: to the 0.6B draft at 0.75 in the article.
FALLING_RATIO = 0.85

#: Share of the card's memory the server may use, like vLLM's ``gpu_memory_utilization``
#: (its default is 0.9): weights, caches and workspace must fit in capacity x this share.
GPU_MEMORY_UTILIZATION = 0.9

#: Memory set aside for activations, CUDA graphs and the sampler's buffers, on top of the
#: weights and the caches. vLLM measures this in a profiling run; for 1-30B dense models
#: with its default 8,192 batched tokens the peak activations plus non-torch memory come to
#: one to a few GiB. 2 GiB (in bytes) is our one allowance for every model and card.
WORKSPACE_BYTES = 2 * 2**30
