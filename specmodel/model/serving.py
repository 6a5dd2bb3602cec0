"""Serving at a latency target: which concurrency serves the most tokens per second while
every user still receives at least a given token rate.

At equal concurrency each user's token rate changes by the same factor as the total, so a
comparison there cannot show a trade between latency and throughput. A service with a
per-user target compares configurations at that target instead: for each, the largest total
throughput among the concurrencies whose per-user rate meets it (and which fit in memory).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def best_at_rate(per_user_rate: Any, total_rate: Any, fits: Any, target_rate: float) -> int:
    """Index of the scenario with the highest ``total_rate`` among those whose
    ``per_user_rate`` is at least ``target_rate`` and that ``fits``; -1 if none does
    (tokens/s; arrays along one axis, e.g. a concurrency ladder).

    >>> best_at_rate([100, 80, 50], [100, 160, 200], [True, True, True], 75)
    1
    >>> best_at_rate([100, 80, 50], [100, 160, 200], [True, True, True], 120)
    -1
    """
    per_user, total = np.asarray(per_user_rate, dtype=float), np.asarray(total_rate, dtype=float)
    ok = (per_user >= target_rate) & np.asarray(fits, dtype=bool)
    if not ok.any():
        return -1
    return int(np.argmax(np.where(ok, total, -np.inf)))
