"""The model a vLLM server names (a scrape's ``model_name`` label: vLLM's ``--served-model-name``,
else the model's path or Hugging Face id), matched with the catalogue's models, so that the
acceptance of one model is never advised as another's.

A served name is matched by its last path component, case-insensitively and without a leading
``Meta-``, against each catalogue model's Hugging Face name (``name`` in ``data/models.toml``,
also without a trailing ``-Instruct``) and key: equal, or followed by a separator and more
(``Llama-3.1-70B-Instruct``, ``Qwen3-8B-AWQ``). The longest match wins.
"""

from __future__ import annotations

import re

from specmodel.errors import SpecModelError
from specmodel.model.specs import architecture_catalog, get_architecture
from specmodel.safe_input import excerpt

_SEPARATORS = "-_.:@ "


def _normal(name: str) -> str:
    """``meta-llama/Meta-Llama-3-70B-Instruct/`` -> ``llama-3-70b-instruct``."""
    last = name.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    return last.removeprefix("meta-")


def catalogue_model(served_name: str) -> str | None:
    """The catalogue key of the model ``served_name`` names, or None if it names none.

    >>> catalogue_model("meta-llama/Llama-3.1-70B-Instruct"), catalogue_model("Qwen/Qwen3-8B-AWQ")
    ('llama-3.1-70b', 'qwen3-8b')
    >>> catalogue_model("/models/Meta-Llama-3-70B"), catalogue_model("my-chat-model")
    ('llama-3-70b', None)
    """
    served = _normal(served_name)
    best, length = None, 0
    for key, architecture in architecture_catalog().items():
        name = _normal(architecture.name)
        for stem in {name, re.sub(r"-instruct$", "", name), key}:
            matches = served == stem or (served.startswith(stem) and served[len(stem)] in _SEPARATORS)
            if matches and len(stem) > length:
                best, length = key, len(stem)
    return best


def hugging_face_id(key: str) -> str:
    """``org/name`` of a catalogue model, from the config.json it was copied from.

    >>> hugging_face_id("qwen3-8b")
    'Qwen/Qwen3-8B'
    """
    match = re.search(r"huggingface\.co/([^/]+/[^/]+)", get_architecture(key).source)
    return match.group(1) if match else get_architecture(key).name


def check_served_model(served_name: str | None, target: str, source: str) -> str | None:
    """Refuse a server's model that is another catalogue model than ``target`` (naming both);
    a note when the name matches no catalogue model (the advice then takes it to be the
    target), else None."""
    if served_name is None:
        return None
    key = catalogue_model(served_name)
    if key is None:
        return (
            f"the server's model_name {excerpt(served_name)} is no model of the catalogue by name; the advice takes "
            f"it to be --target {target} ({hugging_face_id(target)}): check that it is"
        )
    if key != target:
        raise SpecModelError(
            f"{source}: the server's model_name {excerpt(served_name)} is {key} ({hugging_face_id(key)}), but --target "
            f"is {target}; the acceptance of one model says nothing of another's: give --target {key}"
        )
    return None
