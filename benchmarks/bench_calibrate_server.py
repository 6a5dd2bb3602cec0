"""How well ``specmodel fit-engine`` predicts larger batches from small ones.

For every series of the public measurements (one source, drafter, deployment and workload)
measured at batch 1, 16, 64 and 128: fit the profile from its batch 1 and 16 rows, starting
from the public ``vllm`` profile, predict its batch 64 and 128 rows, and compare with the
public profile's error on the same rows (:mod:`sitebuild.server_calibration`, which the
validation page's numbers come from too). Prints per series and overall median
|predicted / measured - 1|. Target: median <= 6% and below the public profile's.

    python benchmarks/bench_calibrate_server.py
"""

from __future__ import annotations

import numpy as np

from sitebuild.server_calibration import all_series, median_errors
from specmodel.measurements import MEASUREMENTS_FILE, MULTIGPU_MEASUREMENTS_FILE
from specmodel.model.settings import Settings

#: The public measurements, as the package carries them (tests check the copies are identical).
FILES = {"one GPU": [MEASUREMENTS_FILE], "four GPUs": [MULTIGPU_MEASUREMENTS_FILE]}


def main() -> None:
    everything = []
    for label, files in FILES.items():
        results = all_series(files, "vllm", Settings())
        everything += results
        for r in results:
            constants = ", ".join(f"{k}={v:.3g}" for k, v in r.fitted.items())
            print(f"{r.name}: median error fitted {np.median(np.abs(r.fitted_errors)):.1%}, "
                  f"public {np.median(np.abs(r.public_errors)):.1%}  [{constants}]")  # fmt: skip
        if results:
            fitted, public = median_errors(results)
            print(f"{label} ({len(results)} series): median error fitted {fitted:.1%}, public {public:.1%}")
    if not everything:
        print("no series with batch 1, 16, 64 and 128 found in", ", ".join(str(f) for fs in FILES.values() for f in fs))
        return
    fitted, public = median_errors(everything)
    rows = sum(len(r.fitted_errors) for r in everything)
    print(
        f"overall ({len(everything)} series, {rows} rows): median error fitted {fitted:.1%}, public {public:.1%}; "
        "target: <= 6% and below the public profile's"
    )


if __name__ == "__main__":
    main()
