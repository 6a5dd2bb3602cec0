"""The vLLM side: its spec-decode counters and what vLLM derives from them (``counters``), one log
line in every layout vLLM has printed (``log_line``), whole logs (``logs``), Prometheus scrapes
(``prometheus``), the V0 engine's totals (``v0``), the drafter a server runs (``speculative_config``),
and advice from measured counters (``advise``, printed by ``advice_text``)."""
