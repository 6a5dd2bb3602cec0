"""What every section's numbers share: the model at the build's settings."""

from __future__ import annotations

from typing import Any

import numpy as np

from sitebuild.config import SiteSettings
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import CONCURRENCY_LADDER

LADDER = np.array(CONCURRENCY_LADDER)


def one(settings: SiteSettings, **scenario: Any) -> Evaluation:
    """The evaluation of a scenario (defaults: the article's) at the build's settings."""
    return evaluate(settings=settings, **scenario)
