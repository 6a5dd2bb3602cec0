"""Section 4's drafters: the tokens per pass the article's acceptance gives n-gram lookup."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, plain


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The tokens per pass the article's α gives n-gram lookup."""
    return {"ngram_workload_article_mal": plain(one(settings, drafter="ngram").mean_acceptance_length)}
