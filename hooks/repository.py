"""MkDocs hook: make the repository's own packages importable while the site is built.

The site builder (``sitebuild``) lives in the repository, not in the installed package, and
the notebook page imports it to embed its figure. Putting the repository on ``PYTHONPATH``
here (before any page is rendered) lets the notebook's kernel, a child process, import it
wherever ``mkdocs`` was started from.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def on_config(config, **kwargs):
    root = str(Path(config["config_file_path"]).resolve().parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
    if root not in sys.path:
        sys.path.insert(0, root)
    return config
