"""The drafter a vLLM server runs, from what the user says: a drafter's name, or vLLM's
``--speculative-config`` JSON, mapped onto the drafters the model costs."""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, replace

from specmodel.errors import SpecModelError
from specmodel.model.drafters import check_drafter, drafter_kind
from specmodel.model.specs import architecture_catalog
from specmodel.model.trees import vllm_tree_fields
from specmodel.model.validation import MAX_GAMMA, MAX_TENSOR_PARALLEL
from specmodel.safe_input import excerpt
from specmodel.structured_input import load_json_text

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
class ServedDrafter:
    """The drafter a vLLM server runs, as the user names it (``--drafter`` or ``--speculative-config``)."""

    drafter: str  #: the drafter (see :mod:`specmodel.model.drafters`) used to cost it
    gamma: int | None  #: num_speculative_tokens, if given (a tree's depth)
    description: str  #: how the user named it
    note: str | None = None  #: how the model stands in for it, when not exactly
    draft_tensor_parallel: int | None = None  #: draft_tensor_parallel_size, if given
    tree_topk: int | None = None  #: most candidates per depth of speculative_token_tree, if given
    verify_tokens: int | None = None  #: the tree's nodes + 1, if a tree is given
    tree_draft_positions: int | None = None  #: positions of the tree's draft passes after the first
    tree_widths: tuple[int, ...] | None = None  #: the tree's level widths, if a tree is given

    def __repr__(self) -> str:
        shown = [f"{k}={getattr(self, k)!r}" for k in ("drafter", "gamma", "description", "note")]
        shown += [f"{k}={v!r}" for k, v in self.layout().items()]
        return f"ServedDrafter({', '.join(shown)})"

    def layout(self) -> dict[str, int]:
        """The scenario fields this deployment fixes (those given)."""
        fields = {"draft_tensor_parallel": self.draft_tensor_parallel, "tree_topk": self.tree_topk,
                  "verify_tokens": self.verify_tokens, "tree_draft_positions": self.tree_draft_positions}  # fmt: skip
        return {k: v for k, v in fields.items() if v is not None}


def served_drafter(drafter: str, target: str | None = None) -> ServedDrafter:
    """A deployment named by one of the model's drafters (gamma: as measured); checked against
    ``target`` if given (:func:`specmodel.vllm.advise.advise` checks it against its target)."""
    if target is None:
        drafter_kind(drafter)
    else:
        check_drafter(drafter, target)
    return ServedDrafter(drafter=drafter, gamma=None, description=f"drafter {drafter}")


#: The keys of --speculative-config read here, and the largest value of each integer one.
_READ = {"method": None, "model": None, "num_speculative_tokens": MAX_GAMMA,
         "draft_tensor_parallel_size": MAX_TENSOR_PARALLEL, "speculative_token_tree": None}  # fmt: skip


def _positive(config: dict, key: str) -> int | None:
    """The integer ``config[key]`` (1 to its bound in :data:`_READ`), or None if absent."""
    value, high = config.get(key), _READ[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= (high or value):
        raise SpecModelError(
            f"--speculative-config {key} {excerpt(value)} is not allowed; it must be an integer from 1 to {high}"
        )
    return value


def _check_keys(config: dict) -> None:
    """Refuse a key that is a slip for one read here (``num_speculative_token``): it would be
    ignored silently. Other keys (vLLM has many) are not the model's business."""
    for key in config:
        close = difflib.get_close_matches(key, list(_READ), n=1, cutoff=0.8)
        if key not in _READ and close and close[0] not in config:
            raise SpecModelError(f"--speculative-config: unknown key {excerpt(key)}; did you mean {close[0]!r}?")


def token_tree(value: object) -> tuple[int, ...]:
    """The level widths ``(w_1, ..., w_gamma)`` of vLLM's ``speculative_token_tree``: a list of
    paths, each a tuple of child ranks from the root (``[(0,), (1,), (0, 0), (1, 0)]``), given
    as a string or a JSON list, in any order (vLLM sorts them breadth-first). vLLM drafts the
    top ``w_j / w_(j-1)`` children of every node of level j - 1 (``EagleProposer.__init__``,
    ``child_drafts_per_level``), so every node of a level must have that many children,
    ranked from 0; any other tree is refused, since vLLM would draft other children than
    the tree lists. The scenario fields are :func:`specmodel.model.trees.vllm_tree_fields`.

    >>> token_tree("[(0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]")
    (3, 6)
    """
    nodes = _paths(value)
    levels: dict[int, set[tuple[int, ...]]] = {}
    for path in nodes:
        levels.setdefault(len(path), set()).add(path)
    depth = max(levels)
    if depth > MAX_GAMMA:
        raise SpecModelError(
            f"--speculative-config speculative_token_tree is {depth} deep; the model takes 1 to {MAX_GAMMA}"
        )
    parents: set[tuple[int, ...]] = {()}
    for level in range(1, depth + 1):
        found = levels.get(level, set())
        children = len(found) // len(parents)
        if found != {p + (i,) for p in parents for i in range(children)}:
            raise SpecModelError(
                f"--speculative-config speculative_token_tree level {level} is ragged: its {len(found)} nodes are not "
                f"ranks 0 to c - 1 under each of the {len(parents)} nodes above; vLLM drafts the top "
                f"{len(found)} // {len(parents)} = {children} children of every node, so it would draft other "
                "children than the tree lists"
            )
        parents = found
    return tuple(len(levels[level]) for level in range(1, depth + 1))


def _paths(value: object) -> list[tuple[int, ...]]:
    """The paths of a ``speculative_token_tree``: distinct, non-empty tuples of non-negative ranks."""
    try:
        paths = ast.literal_eval(value) if isinstance(value, str) else value
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        paths = None
    sequence = (list, tuple)
    if not isinstance(paths, sequence) or not all(
        isinstance(path, sequence) and all(isinstance(i, int) and not isinstance(i, bool) for i in path)
        for path in paths
    ):
        raise SpecModelError(
            f"--speculative-config speculative_token_tree {excerpt(value)} is not a list of paths such as "
            "[(0,), (1,), (0, 0)]"
        )
    nodes = [tuple(path) for path in paths]
    if not nodes or any(not path or min(path) < 0 for path in nodes) or len(set(nodes)) != len(nodes):
        raise SpecModelError(
            "--speculative-config speculative_token_tree needs distinct, non-empty paths of non-negative indices"
        )
    known = set(nodes)
    if any(path[:-1] and path[:-1] not in known for path in nodes):
        raise SpecModelError("--speculative-config speculative_token_tree has a path whose parent is not in the tree")
    return nodes


def _layout(config: dict, gamma: int | None) -> tuple[int | None, dict[str, int], tuple[int, ...] | None]:
    """gamma (a tree's depth), the layout fields (draft_tensor_parallel_size and the tree's,
    :func:`specmodel.model.trees.vllm_tree_fields`) and the tree's level widths, if any."""
    fields: dict[str, int] = {}
    draft_tp = _positive(config, "draft_tensor_parallel_size")
    if draft_tp is not None:
        fields["draft_tensor_parallel"] = draft_tp
    tree = config.get("speculative_token_tree")
    widths = None
    if tree is not None:
        widths = token_tree(tree)
        fields.update(vllm_tree_fields(widths))
        gamma = len(widths)
    return gamma, fields, widths


#: Longest method name read (vLLM's are short: "ngram", "eagle3", "deepseek_mtp").
_MAX_METHOD = 100


def _method(config: dict) -> str:
    """vLLM's method, inferred as vLLM does when absent: model "ngram" -> ngram, a model
    named like an EAGLE or Medusa head -> that, any other model -> draft_model."""
    method, model = config.get("method"), config.get("model")
    if method is not None:
        if not isinstance(method, str) or not 0 < len(method) <= _MAX_METHOD:
            raise SpecModelError(
                f"--speculative-config method {excerpt(method)} is not a method name (a string of 1 to {_MAX_METHOD} "
                "characters)"
            )
        return method.lower()
    if model is None:
        raise SpecModelError("--speculative-config needs a 'method' or a 'model'")
    if not isinstance(model, str):
        raise SpecModelError(f"--speculative-config model {excerpt(model)} is not a string")
    name = model.lower()
    if name in ("ngram", "[ngram]"):
        return "ngram"
    for head in ("eagle3", "eagle", "medusa"):
        if head in name.rsplit("/", 1)[-1]:
            return head
    return "draft_model"


def served_drafter_from_config(text: str) -> ServedDrafter:
    """Parse vLLM's ``--speculative-config`` JSON, e.g. ``{"method": "ngram",
    "num_speculative_tokens": 3, "prompt_lookup_max": 4}`` or ``{"model": "Qwen/Qwen3-0.6B",
    "num_speculative_tokens": 4}``. Lookup methods cost as ``ngram``; EAGLE and MTP heads as the
    heads of data/heads.toml; Medusa-like heads as ``ngram`` (said in the note); draft models must
    be in the catalogue.

    A ``draft_tensor_parallel_size`` and a ``speculative_token_tree`` (:func:`token_tree`; its
    depth is then gamma) are read too.

    >>> served_drafter_from_config('{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}')
    ServedDrafter(drafter='qwen3-0.6b', gamma=4, description='draft model Qwen/Qwen3-0.6B', note=None)
    >>> d = served_drafter_from_config('{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3-Instruct-8B", '
    ...     '"draft_tensor_parallel_size": 1, "speculative_token_tree": "[(0,), (1,), (0, 0), (1, 0)]"}')
    >>> d.drafter, d.gamma, d.layout()
    ('eagle', 2, {'draft_tensor_parallel': 1, 'tree_topk': 2, 'verify_tokens': 5, 'tree_draft_positions': 2})
    """
    config = load_json_text(text, "--speculative-config", _MAX_CONFIG)
    if not isinstance(config, dict):
        raise SpecModelError(f"--speculative-config must be a JSON object; got {excerpt(text.strip(), 40)}")
    _check_keys(config)
    gamma, layout, widths = _layout(config, _positive(config, "num_speculative_tokens"))
    drafter = _drafter(config, gamma)
    return replace(
        drafter,
        draft_tensor_parallel=layout.get("draft_tensor_parallel"),
        tree_topk=layout.get("tree_topk"),
        verify_tokens=layout.get("verify_tokens"),
        tree_draft_positions=layout.get("tree_draft_positions"),
        tree_widths=widths,
    )


def _drafter(config: dict, gamma: int | None) -> ServedDrafter:
    """The drafter of a parsed --speculative-config (see :func:`served_drafter_from_config`)."""
    method = _method(config)
    if method in _LOOKUP_METHODS:
        note = None if method == "ngram" else f"method {method!r} looks drafts up in the text; costed as 'ngram'"
        return ServedDrafter(ZERO_COST_DRAFTER, gamma, f"method {method}", note)
    if method in _HEADS or method.endswith("_mtp"):
        head = _HEADS.get(method, "mtp")
        note = (
            None
            if head == method
            else (f"method {method!r} is costed as the '{head}' head (see specmodel/data/heads.toml)")
        )
        return ServedDrafter(head, gamma, f"method {method}", note)
    if method in _NEAREST_HEAD:
        head = _NEAREST_HEAD[method]
        note = (
            f"method {method!r} drafts from several target layers' hidden states with a small network of its "
            f"own; costed as the nearest modelled head, '{head}' (see specmodel/data/heads.toml)"
        )
        return ServedDrafter(head, gamma, f"method {method}", note)
    if method in _OTHER_HEAD_METHODS:
        note = (
            f"method {method!r} drafts with a small head on the target's hidden states; modelled as the "
            "zero-cost 'ngram' drafter (no weights, cache or FLOPs of its own), which flatters it slightly"
        )
        return ServedDrafter(ZERO_COST_DRAFTER, gamma, f"method {method}", note)
    if method != "draft_model":
        raise SpecModelError(f"--speculative-config method {excerpt(method)} is not modelled; supported: {_SUPPORTED}")
    model = config.get("model")
    key, note = draft_model_key(model)
    return ServedDrafter(key, gamma, f"draft model {model}", note)


def draft_model_key(model: object) -> tuple[str, str | None]:
    """The model key of a draft model as ``--speculative-config`` names it, and a note when it
    is priced by another name: a catalogue key as it is; a config.json path, model folder or
    Hugging Face id in the local Hugging Face cache, read from its config.json; else a
    catalogue model whose name the id extends (``Qwen/Qwen3-0.6B-Base``: ``qwen3-0.6b``,
    said in the note). Anything else is refused.

    >>> draft_model_key("Qwen/Qwen3-0.6B")
    ('qwen3-0.6b', None)
    >>> draft_model_key("Qwen/Qwen3-0.6B-Base")[0]
    'qwen3-0.6b'
    """
    from specmodel.model.config_json import catalogue_model, resolve_model

    if not isinstance(model, str):
        raise SpecModelError(f"--speculative-config model {excerpt(model)} is not a string")
    last = model.rstrip("/").rsplit("/", 1)[-1].lower()
    if last in architecture_catalog():
        return last, None
    try:
        return resolve_model(model), None
    except SpecModelError:
        pass
    key = catalogue_model(model)
    if key is None:
        raise SpecModelError(f"--speculative-config model {excerpt(model)} is not modelled; supported: {_SUPPORTED}")
    return key, (
        f"draft model {excerpt(model)} is priced as {key}, the catalogue model its name extends; give its "
        "config.json path in the configuration's model to price its own layout and format"
    )
