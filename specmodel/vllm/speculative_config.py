"""The drafter a vLLM server runs, from what the user says: a drafter's name, or vLLM's
``--speculative-config`` JSON, mapped onto the drafters the model costs."""

from __future__ import annotations

import json
from dataclasses import dataclass

from specmodel.errors import SpecModelError
from specmodel.model.drafters import check_drafter, drafter_kind
from specmodel.model.specs import architecture_catalog
from specmodel.safe_input import excerpt

#: The drafter that stands for every drafter without weights of its own.
ZERO_COST_DRAFTER = "ngram"

#: vLLM speculative methods that look drafts up in the text, with no model: costed as ngram.
_LOOKUP_METHODS = ("ngram", "ngram_gpu", "suffix")
#: vLLM head methods the model costs from their structure, and the head that stands for each.
_HEADS = {"eagle": "eagle", "eagle3": "eagle3", "mtp": "mtp"}
#: Other vLLM methods with a small head on the target's hidden states: costed as zero-cost.
_OTHER_HEAD_METHODS = ("medusa", "mlp_speculator")
#: Drafters seen in real deployments that draft from several target layers' hidden states
#: with a small network of their own: costed as the nearest modelled head, EAGLE-3.
_NEAREST_HEAD = {"dflash": "eagle3", "dspark": "eagle3"}
#: Longest --speculative-config read (characters): far above any real one.
_MAX_CONFIG = 64 * 1024
_SUPPORTED = (
    "methods "
    + ", ".join(_LOOKUP_METHODS + tuple(_HEADS) + _OTHER_HEAD_METHODS + tuple(_NEAREST_HEAD))
    + ", *_mtp, draft_model "
    "(a model of the catalogue, e.g. Qwen/Qwen3-0.6B or meta-llama/Llama-3.2-1B)"
)


@dataclass(frozen=True)
class Deployment:
    """What the user says about the drafter."""

    drafter: str  #: the drafter (see :mod:`specmodel.model.drafters`) used to cost it
    gamma: int | None  #: num_speculative_tokens, if given
    description: str  #: how the user named it
    note: str | None = None  #: how the model stands in for it, when not exactly


def deployment_from_drafter(drafter: str, target: str | None = None) -> Deployment:
    """A deployment named by one of the model's drafters (gamma: as measured); checked against
    ``target`` if given (:func:`specmodel.vllm.advise.advise` checks it against its target)."""
    if target is None:
        drafter_kind(drafter)
    else:
        check_drafter(drafter, target)
    return Deployment(drafter=drafter, gamma=None, description=f"drafter {drafter}")


def _speculative_tokens(config: dict) -> int | None:
    value = config.get("num_speculative_tokens")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecModelError(
            f"--speculative-config num_speculative_tokens {value!r} is not allowed; it must be an integer >= 1"
        )
    return value


def _method(config: dict) -> str:
    """vLLM's method, inferred as vLLM does when absent: model "ngram" -> ngram, a model
    named like an EAGLE or Medusa head -> that, any other model -> draft_model."""
    method, model = config.get("method"), config.get("model")
    if method is not None:
        if not isinstance(method, str):
            raise SpecModelError(f"--speculative-config method {method!r} is not a string")
        return method.lower()
    if model is None:
        raise SpecModelError("--speculative-config needs a 'method' or a 'model'")
    if not isinstance(model, str):
        raise SpecModelError(f"--speculative-config model {model!r} is not a string")
    name = model.lower()
    if name in ("ngram", "[ngram]"):
        return "ngram"
    for head in ("eagle3", "eagle", "medusa"):
        if head in name.rsplit("/", 1)[-1]:
            return head
    return "draft_model"


def deployment_from_speculative_config(text: str) -> Deployment:
    """Parse vLLM's ``--speculative-config`` JSON, e.g. ``{"method": "ngram",
    "num_speculative_tokens": 3, "prompt_lookup_max": 4}`` or ``{"model": "Qwen/Qwen3-0.6B",
    "num_speculative_tokens": 4}``. Lookup methods cost as ``ngram``; EAGLE and MTP heads as the
    heads of data/heads.toml; Medusa-like heads as ``ngram`` (said in the note); draft models must
    be in the catalogue.

    >>> deployment_from_speculative_config('{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}')
    Deployment(drafter='qwen3-0.6b', gamma=4, description='draft model Qwen/Qwen3-0.6B', note=None)
    """
    if len(text) > _MAX_CONFIG:
        raise SpecModelError(f"--speculative-config is {len(text):,} characters long; at most {_MAX_CONFIG:,} are read")
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecModelError(f"--speculative-config is not valid JSON: {exc.msg} at character {exc.pos}") from None
    except RecursionError:
        raise SpecModelError("--speculative-config nests too deeply to be a vLLM configuration") from None
    if not isinstance(config, dict):
        raise SpecModelError(f"--speculative-config must be a JSON object; got {excerpt(text.strip(), 40)}")
    gamma = _speculative_tokens(config)
    method = _method(config)
    if method in _LOOKUP_METHODS:
        note = None if method == "ngram" else f"method {method!r} looks drafts up in the text; costed as 'ngram'"
        return Deployment(ZERO_COST_DRAFTER, gamma, f"method {method}", note)
    if method in _HEADS or method.endswith("_mtp"):
        head = _HEADS.get(method, "mtp")
        note = (
            None
            if head == method
            else (f"method {method!r} is costed as the '{head}' head (see specmodel/data/heads.toml)")
        )
        return Deployment(head, gamma, f"method {method}", note)
    if method in _NEAREST_HEAD:
        head = _NEAREST_HEAD[method]
        note = (
            f"method {method!r} drafts from several target layers' hidden states with a small network of its "
            f"own; costed as the nearest modelled head, '{head}' (see specmodel/data/heads.toml)"
        )
        return Deployment(head, gamma, f"method {method}", note)
    if method in _OTHER_HEAD_METHODS:
        note = (
            f"method {method!r} drafts with a small head on the target's hidden states; modelled as the "
            "zero-cost 'ngram' drafter (no weights, cache or FLOPs of its own), which flatters it slightly"
        )
        return Deployment(ZERO_COST_DRAFTER, gamma, f"method {method}", note)
    if method != "draft_model":
        raise SpecModelError(f"--speculative-config method {method!r} is not modelled; supported: {_SUPPORTED}")
    model = config.get("model")
    key = model.rstrip("/").rsplit("/", 1)[-1].lower() if isinstance(model, str) else None
    if key not in architecture_catalog():
        raise SpecModelError(f"--speculative-config model {model!r} is not modelled; supported: {_SUPPORTED}")
    return Deployment(key, gamma, f"draft model {model}")
