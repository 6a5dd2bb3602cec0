"""The record of one figure of the site (:class:`FigureSpec`): its id, accessible title and
caption, the data it is drawn from, how to draw that data, the tidy table of that data the site
publishes beside the figure as its text alternative (CSV), and the simulator setting its
caption links to. Each module of :mod:`sitebuild.figures` lists its figures as FigureSpecs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from sitebuild.config import SiteSettings


def frame_table(computed: Any) -> pd.DataFrame:
    """The table of data that is one DataFrame: the frame itself."""
    if not isinstance(computed, pd.DataFrame):
        raise TypeError(f"a figure's data is a {type(computed).__name__}: give its FigureSpec a table function")
    return computed


def parts_table(column: str, *parts: tuple[str, pd.DataFrame]) -> pd.DataFrame:
    """Several frames as one table, each row named by its part in a first column ``column``."""
    frames = [
        frame.assign(**{column: name})[[column, *frame.columns.drop(column, errors="ignore")]] for name, frame in parts
    ]
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class FigureSpec:
    """A figure of the site: its id (``{{ figure:<id> }}`` in the Markdown), an accessible
    title, the one-line caption saying what to look at, the data it shows (computed once from
    the settings), how to draw that data, the data as one tidy table (the published CSV), and
    the simulator setting its caption links to (the article's defaults but for these; None: no
    link), so that a reader can open what the figure shows and change it."""

    id: str
    title: str
    caption: str
    data: Callable[[SiteSettings], Any]
    draw: Callable[[Any, SiteSettings], go.Figure]
    table: Callable[[Any], pd.DataFrame] = frame_table
    setting: Callable[[SiteSettings], dict[str, object]] | None = None

    def make(self, settings: SiteSettings) -> go.Figure:
        """The figure for these settings."""
        return self.draw(self.data(settings), settings)
