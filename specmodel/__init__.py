"""specmodel: a roofline cost model of speculative decoding.

The public API (pinned by ``tests/test_public_api.py``):

>>> from specmodel import Scenario, evaluate
>>> round(float(evaluate(Scenario(concurrency=64)).speedup), 2)
0.89
"""

from specmodel.errors import SpecModelError
from specmodel.model.drafters import drafter_names
from specmodel.model.evaluate import evaluate, evaluate_per_position
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import AXES, PROFILES, Scenario, ScenarioGrid, default_scenario
from specmodel.model.settings import Settings, current, load_settings, using

__all__ = [
    "AXES",
    "PROFILES",
    "Evaluation",
    "Scenario",
    "ScenarioGrid",
    "Settings",
    "SpecModelError",
    "current",
    "default_scenario",
    "drafter_names",
    "evaluate",
    "evaluate_per_position",
    "load_settings",
    "using",
]
