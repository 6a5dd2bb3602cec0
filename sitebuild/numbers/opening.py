"""The opening and the appendix: the names of the simulated system, its default speedup and
arithmetic, and Algorithm 1 run."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.figures.acceptance import SAMPLING_SEED, SAMPLING_TRIALS
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, name, plain, speedup_at, times
from sitebuild.sampling import total_variation_distance, toy_demo
from specmodel.model.scenario import default_scenario
from specmodel.model.specs import get_architecture, get_hardware


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """Names of the deployment, the default scenario at one sequence, and the toy run of
    Algorithm 1."""
    dep = settings.deployment
    d = one(settings)
    demo = toy_demo(seed=SAMPLING_SEED, trials=SAMPLING_TRIALS)
    return {
        "hardware_name": name(get_hardware(dep.hardware).name),
        "target_name": name(get_architecture(dep.target).name),
        "draft_name": name(get_architecture(dep.draft).name),
        "generated_tokens": plain(default_scenario(settings).generated_tokens, 0),
        "speedup_b1": speedup_at(d.speedup),
        "arith_b1": times(d.arithmetic_ratio),
        "sampling_trials": plain(demo.trials, 0),
        "sampling_acceptance": plain(demo.acceptance_rate, 3),
        "sampling_expected": plain(demo.expected_acceptance, 3),
        "sampling_tv": plain(total_variation_distance(demo.output, demo.p), 4),
    }
