"""The site's settings: the model's (:class:`specmodel.Settings`) plus what only the article
needs, read from a ``--config`` file.

The article compares two draft models ("a better draft can be a worse deal"): the
deployment's ``draft`` and a larger ``big_draft``. The model knows nothing of the second; it
is the site's, so it lives here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import Field, model_validator

from specmodel.model.drafters import DrafterKind, check_drafter
from specmodel.model.layout import check_parallelism
from specmodel.model.settings import Deployment, Settings
from specmodel.safe_input import excerpt, load_config_file, validated


class ArticleDeployment(Deployment):
    """The model's deployment plus the article's larger draft model."""

    big_draft: str = "qwen3-1.7b"  #: the larger draft of "a better draft can be a worse deal"

    @model_validator(mode="after")
    def _big_draft_serves(self) -> ArticleDeployment:
        check_drafter(self.big_draft, self.target, kinds=(DrafterKind.MODEL,))
        return self

    @model_validator(mode="after")
    def _gpus_hold_the_split(self) -> ArticleDeployment:
        """A ``tensor_parallel`` the card's group and the models' heads allow, checked when the
        file is read rather than halfway through the build."""
        if self.tensor_parallel is not None:
            drafters = np.array([self.draft, self.big_draft])
            check_parallelism(self.tensor_parallel, None, self.hardware, self.target, drafters)
        return self


class SiteSettings(Settings):
    """:class:`specmodel.Settings` whose deployment is the article's."""

    deployment: ArticleDeployment = Field(default_factory=ArticleDeployment)


def load_site_settings(path: Path) -> SiteSettings:
    """Settings from a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file with optional sections
    ``constants`` (names as in :mod:`specmodel.model.constants`) and ``deployment``
    (``hardware``, ``target``, ``draft``, ``big_draft``, ``tensor_parallel``); anything left out
    keeps its default. A bad file is one line naming the problem and what is allowed."""
    where = f"config {excerpt(str(path), 200)}"
    return validated(SiteSettings, load_config_file(path, where), where)
