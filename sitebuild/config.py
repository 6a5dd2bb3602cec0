"""The site's settings: the model's (:class:`specmodel.Settings`) plus what only the article
needs, read from a ``--config`` file.

The article compares two draft models ("a better draft can be a worse deal"): the
deployment's ``draft`` and a larger ``big_draft``. The model knows nothing of the second; it
is the site's, so it lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model.drafters import DrafterKind, check_drafter
from specmodel.model.layout import check_parallelism
from specmodel.model.settings import Deployment, Settings
from specmodel.records import StrictStr
from specmodel.safe_input import excerpt, load_config_file, validated


@dataclass(frozen=True, kw_only=True)
class ArticleDeployment(Deployment):
    """The model's deployment plus the article's larger draft model, which must serve the
    target; a ``tensor_parallel`` the card's group and the models' heads allow, checked when the
    file is read rather than halfway through the build."""

    big_draft: StrictStr = "qwen3-1.7b"  #: the larger draft of "a better draft can be a worse deal"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_drafter(self.big_draft, self.target, kinds=(DrafterKind.MODEL,))
        if self.tensor_parallel is not None:
            drafters = np.array([self.draft, self.big_draft])
            check_parallelism(self.tensor_parallel, None, self.hardware, self.target, drafters)


@dataclass(frozen=True, kw_only=True)
class SiteSettings(Settings):
    """:class:`specmodel.Settings` whose deployment is the article's."""

    deployment: ArticleDeployment = field(default_factory=ArticleDeployment)


#: The configuration key naming an engine profile file (relative to the configuration file).
ENGINE_PROFILE_KEY = "engine_profile"

#: The engine the article's real-server parts use; an ``engine_profile`` takes its place.
ARTICLE_ENGINE = "vllm"


def load_site_settings(path: Path) -> SiteSettings:
    """Settings from a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file with optional sections
    ``constants`` (names as in :mod:`specmodel.model.constants`) and ``deployment``
    (``hardware``, ``target``, ``draft``, ``big_draft``, ``tensor_parallel``), and an optional
    ``engine_profile = "my-server.toml"`` (:func:`with_profile_file`); anything left out
    keeps its default. A bad file is one line naming the problem and what is allowed."""
    where = f"config {excerpt(str(path), 200)}"
    data = load_config_file(path, where)
    profile = data.pop(ENGINE_PROFILE_KEY, None)
    settings = validated(SiteSettings, data, where)
    if profile is None:
        return settings
    if not isinstance(profile, str) or not profile:
        raise SpecModelError(f'{where}: {ENGINE_PROFILE_KEY} must be a file name, such as "my-server.toml"')
    return with_profile_file(settings, path.parent / profile, f"{where}: {ENGINE_PROFILE_KEY}")


def with_profile_file(settings: SiteSettings, profile_path: Path, where: str) -> SiteSettings:
    """``settings`` with the profile in ``profile_path`` (as ``specmodel fit-engine`` writes
    one) in place of :data:`ARTICLE_ENGINE`, under that key: every part of the article that
    prices a real server (the engines section, the multi-GPU figures, the simulator's
    real-engine setting) then uses the author's own server, and nothing else changes.

    The file is read as ``--engine-profile`` reads one
    (:func:`specmodel.model.profile_file.load_profile`): every constant within its physical
    range, and its own key not a built-in engine's (a file never names itself ``vllm``; this
    configuration key, not the file, says that it stands in for it). A bad file is one line,
    before the build computes anything."""
    from specmodel.model.profile_file import load_profile

    profile = load_profile(profile_path, where)
    engines = {**settings.engines, ARTICLE_ENGINE: replace(profile, key=ARTICLE_ENGINE)}
    return replace(settings, engines=engines)
