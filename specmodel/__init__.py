"""specmodel: a roofline cost model of speculative decoding.

The public API (pinned by ``tests/test_layout.py``). Settings are passed, never looked up:
``evaluate(..., settings=Settings(constants=Constants(MEMORY_EFFICIENCY=0.7)))``.

>>> from specmodel import Scenario, evaluate
>>> round(float(evaluate(Scenario(concurrency=64)).speedup), 2)
0.89
"""

from specmodel.errors import SpecModelError
from specmodel.model.drafters import drafter_names
from specmodel.model.evaluate import evaluate, evaluate_per_position
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import AXES, PROFILES, Scenario, ScenarioGrid, default_scenario
from specmodel.model.settings import Constants, Deployment, Settings


def __getattr__(name: str) -> str:
    """``specmodel.__version__``: the installed distribution's version, read only when asked
    (importlib.metadata takes longer to import than the model itself); a source tree that is
    not installed has none, ``0+unknown``."""
    if name != "__version__":
        raise AttributeError(f"module 'specmodel' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("specmodel")
    except PackageNotFoundError:  # pragma: no cover - run from an uninstalled source tree
        return "0+unknown"


__all__ = [
    "AXES",
    "PROFILES",
    "Constants",
    "Deployment",
    "Evaluation",
    "Scenario",
    "ScenarioGrid",
    "Settings",
    "SpecModelError",
    "default_scenario",
    "drafter_names",
    "evaluate",
    "evaluate_per_position",
]
