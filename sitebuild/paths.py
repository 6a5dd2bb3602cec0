"""Where the site builder finds the repository's files."""

from pathlib import Path

from specmodel.measurements import MEASUREMENTS_FILE

ROOT = Path(__file__).resolve().parents[1]
#: Public measurements of real servers (with their sources).
MEASUREMENTS = MEASUREMENTS_FILE
#: Figures the article quotes from papers (not from the model), each with its source.
LITERATURE = Path(__file__).resolve().parent / "data" / "literature.toml"
#: What a step time of EAGLE-3's own would trade (sitebuild/engine_tradeoff.py), as ``make fit``
#: records it; a test checks it is what a fresh computation gives.
EAGLE3_TRADEOFF = Path(__file__).resolve().parent / "data" / "eagle3-tradeoff.json"
#: The ``vllm`` profile refitted at other memory efficiencies (sitebuild/memory_sensitivity.py), as
#: ``make fit`` records it; a test checks it is what a fresh computation gives.
MEMORY_SENSITIVITY = Path(__file__).resolve().parent / "data" / "memory-sensitivity.json"
#: The fits on a subset of the rows the validation page quotes (the small-batch fit, each source's
#: own EAGLE-3 step), as ``make fit`` records them; a test checks they are a fresh computation's.
SUBSET_FITS = Path(__file__).resolve().parent / "data" / "subset-fits.json"
#: Every public series calibrated from its small batches as ``fit-engine`` would calibrate it
#: (sitebuild/server_calibration.py), as ``make fit`` records it; a test checks it is a fresh computation's.
SERVER_CALIBRATION = Path(__file__).resolve().parent / "data" / "server-calibration.json"
#: Public measurements found elsewhere than in that file, shown on the validation page as held
#: out and never fitted (nothing that fits reads this file; tests/test_elsewhere.py checks it).
ELSEWHERE = Path(__file__).resolve().parent / "data" / "measurements-elsewhere.csv"
#: Public measurements of a draft model (Qwen3-0.6B for Qwen3-8B on one H100, SpecDecode-Bench) at
#: 1 to 128 sequences, acceptance not published: each series' acceptance is fitted at batch 1 and
#: the larger batches predicted; shown on the validation page as held out (nothing that fits reads
#: this file; tests/test_elsewhere.py checks it).
DRAFT_MODEL_MEASUREMENTS = Path(__file__).resolve().parent / "data" / "measurements-draft-model.csv"
#: Forward passes of the article's two models timed on a GPU by tools/time_passes.py (random
#: weights, transformers); absent until a run on a CUDA machine writes it.
PASS_TIMINGS = Path(__file__).resolve().parent / "data" / "pass-timings.json"
