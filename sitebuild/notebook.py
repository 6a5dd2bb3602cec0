"""Show a Plotly figure in a notebook page of the site (no plotly.js in the output: the
site's single copy draws it, exactly as for the article's figures)."""

from __future__ import annotations

import plotly.graph_objects as go


def show(fig: go.Figure, figure_id: str, caption: str = ""):
    """IPython HTML output with the figure as the site embeds it."""
    from IPython.display import HTML

    from sitebuild.build import FigureSpec, figure_fragment

    spec = FigureSpec(figure_id, caption or figure_id, caption, lambda: fig)
    return HTML(figure_fragment(spec, fig))
