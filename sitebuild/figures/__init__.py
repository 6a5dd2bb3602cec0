"""Drawing: one Plotly figure per function, from the data of :mod:`sitebuild.figures_data`.

Nothing here calls the model. Conventions: n-gram in teal, losses against plain decoding
in magenta, a dashed 1.0x line on every speedup axis, hover text with units, axis ranges
pinned so that sliders and buttons never rescale them. The ladders are in ``ladders``,
the costs of a pass in ``costs``, acceptance in ``acceptance``, the page on
several GPUs in ``multigpu``.
"""

from sitebuild.figures.acceptance import alpha_sweep, gamma_sweep, per_position, sampling, tokens_per_iteration
from sitebuild.figures.common import UNFIT_SYMBOL
from sitebuild.figures.costs import arithmetic_bill, context_sweep, head_costs, memory_footprint, roofline
from sitebuild.figures.engines import engine_ladder, validation
from sitebuild.figures.ladders import breakeven_map, hardware_ladders, ladder
from sitebuild.figures.multigpu import moe_weights, multigpu_validation, panel_ladders, tree_ladder

__all__ = [
    "UNFIT_SYMBOL",
    "alpha_sweep",
    "arithmetic_bill",
    "breakeven_map",
    "context_sweep",
    "engine_ladder",
    "gamma_sweep",
    "hardware_ladders",
    "head_costs",
    "ladder",
    "memory_footprint",
    "moe_weights",
    "multigpu_validation",
    "panel_ladders",
    "per_position",
    "roofline",
    "sampling",
    "tokens_per_iteration",
    "tree_ladder",
    "validation",
]
