"""specmodel: a roofline cost model of speculative decoding."""

from specmodel.errors import SpecModelError
from specmodel.model import DEFAULTS, DRAFTERS, PROFILES, Evaluation, evaluate, evaluate_per_position

__all__ = ["DEFAULTS", "DRAFTERS", "PROFILES", "Evaluation", "SpecModelError", "evaluate", "evaluate_per_position"]
