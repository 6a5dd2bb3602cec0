"""The vLLM side: its spec-decode counters and how it prints them (``metrics``), reading them
back from logs (``logs``) and Prometheus scrapes (``prometheus``), a Monte Carlo run of the
model that produces them (``engine``), and advice from measured counters (``advise``)."""
