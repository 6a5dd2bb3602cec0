"""specmodel: a roofline cost model of speculative decoding."""

from specmodel.drafters import drafter_names
from specmodel.errors import SpecModelError
from specmodel.model import PROFILES, SCENARIO_DEFAULTS, Evaluation, defaults, evaluate, evaluate_per_position
from specmodel.settings import Settings, load_settings, using

__all__ = ["PROFILES", "SCENARIO_DEFAULTS", "Evaluation", "Settings", "SpecModelError", "defaults", "drafter_names",
           "evaluate", "evaluate_per_position", "load_settings", "using"]
