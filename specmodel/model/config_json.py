"""Any model from its Hugging Face ``config.json``: the fields the cost model prices, read into
an :class:`~specmodel.model.specs.Architecture` and registered next to the catalogue.

What is read: the layout (``model_type``, else ``architectures``), the shapes (layers, widths,
heads, head dim, MLP widths, vocabulary), tied embeddings, the storage type (``torch_dtype``,
or ``dtype`` in newer files), the mixture-of-experts and latent-attention fields of
:data:`specmodel.model.specs.MOE_FIELDS` and :data:`specmodel.model.specs.MLA_FIELDS`,
``num_nextn_predict_layers``, and ``quantization_config`` (kept on the record as read).

What is not priced: sliding-window attention (``sliding_window``, ``layer_types``,
``use_sliding_window``; every layer is priced as attending to the whole cache), rotary
scaling (``rope_scaling``, ``rope_theta``), logit soft-capping, the vision
tower and projector of a multimodal config (Gemma 3's ``vision_config``: only
``text_config`` is read), the routing's auxiliary losses, and the quantization itself.

A field the file leaves out takes the default of transformers' configuration class for its
family (``LlamaConfig``, ``MistralConfig``, ``Qwen2Config``, ``Qwen3Config``,
``Gemma2Config``, ``Gemma3TextConfig``, ``MixtralConfig``, ``Qwen2MoeConfig``,
``Qwen3MoeConfig``, ``DeepseekV3Config``; src/transformers/models/<family>/configuration_<family>.py)
where it only describes a convention (tied embeddings, context length, vocabulary, MoE layer
rules); the widths, heads and layer counts must be given. A missing ``num_key_value_heads``
is ``num_attention_heads`` (multi-head attention), a missing ``head_dim`` is
``hidden_size // num_attention_heads``.

Nothing here reaches the network: a Hugging Face id is looked up in the local cache only.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.model.specs import (
    DTYPE_BYTES,
    MLA_FIELDS,
    MODEL_TYPES,
    MOE_FIELDS,
    Architecture,
    add_architecture,
    architecture_catalog,
    same_network,
)
from specmodel.safe_input import MAX_TEXT_BYTES, excerpt, path_text, read_limited_text, validated
from specmodel.structured_input import load_json_text

#: config.json ``model_type`` values read, with the layout each is counted as: Mistral is
#: Llama's layout; ``gemma3`` is Gemma 3's multimodal wrapper around a ``gemma3_text`` model.
FAMILIES = {**{t: t for t in MODEL_TYPES}, "mistral": "llama", "gemma3": "gemma3_text"}

#: config.json ``architectures`` entries read when ``model_type`` names no family above
#: (Kimi-K2's ``kimi_k2`` is ``DeepseekV3ForCausalLM``).
ARCHITECTURES = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "Gemma2ForCausalLM": "gemma2",
    "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3_text",
    "MixtralForCausalLM": "mixtral",
    "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "DeepseekV3ForCausalLM": "deepseek_v3",
}

_QWEN_VOCAB = 151936
#: transformers' configuration-class defaults of the fields a published config.json may leave
#: out (``vocab_size``, ``max_position_embeddings``, ``tie_word_embeddings``, and head_dim where
#: the class has its own default rather than D / N), by layout.
DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {"vocab_size": 32000, "max_position_embeddings": 2048, "tie_word_embeddings": False},
    "qwen2": {"vocab_size": _QWEN_VOCAB, "max_position_embeddings": 32768, "tie_word_embeddings": False},
    "qwen3": {
        "vocab_size": _QWEN_VOCAB,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
        "head_dim": 128,
    },
    "gemma2": {"vocab_size": 256000, "max_position_embeddings": 8192, "tie_word_embeddings": True, "head_dim": 256},
    "gemma3_text": {
        "vocab_size": 262208,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": True,
        "head_dim": 256,
    },
    "mixtral": {"vocab_size": 32000, "max_position_embeddings": 131072, "tie_word_embeddings": False},
    "qwen2_moe": {
        "vocab_size": _QWEN_VOCAB,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "norm_topk_prob": False,
    },
    "qwen3_moe": {
        "vocab_size": _QWEN_VOCAB,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "norm_topk_prob": False,
    },
    "deepseek_v3": {
        "vocab_size": 129280,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "moe_layer_freq": 1,
        "norm_topk_prob": True,
    },
}
#: MistralConfig's own defaults (read as the ``llama`` layout).
_MISTRAL_DEFAULTS = {"vocab_size": 32000, "max_position_embeddings": 4096 * 32, "tie_word_embeddings": False}

#: Record field: the config.json name it is read from, where the family names it otherwise.
ALIASES: dict[str, dict[str, str]] = {
    "mixtral": {"num_experts": "num_local_experts", "moe_intermediate_size": "intermediate_size"},
    "deepseek_v3": {"num_experts": "n_routed_experts"},
}

_SHAPE = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
_INTEGERS = (
    *_SHAPE,
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "max_position_embeddings",
    "num_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "decoder_sparse_step",
    "shared_expert_intermediate_size",
    "n_shared_experts",
    "first_k_dense_replace",
    "moe_layer_freq",
    "q_lora_rank",
    *MLA_FIELDS,
    "num_nextn_predict_layers",
)
_BOOLEANS = ("tie_word_embeddings", "attention_bias", "norm_topk_prob")


def config_layout(data: dict[str, Any], where: str) -> str:
    """The layout ``data`` (a parsed config.json) is counted as: its ``model_type``'s family, else
    its first known ``architectures`` entry's; a one-line SpecModelError naming the field otherwise.

    >>> config_layout({"model_type": "mistral"}, "config.json"), config_layout({"model_type": "gemma3"}, "c")
    ('llama', 'gemma3_text')
    >>> config_layout({"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"]}, "c")
    'deepseek_v3'
    """
    model_type = data.get("model_type")
    if isinstance(model_type, str) and model_type in FAMILIES:
        return FAMILIES[model_type]
    architectures = data.get("architectures")
    for name in architectures if isinstance(architectures, list) else []:
        if isinstance(name, str) and name in ARCHITECTURES:
            return ARCHITECTURES[name]
    raise SpecModelError(
        f"{where}: model_type {excerpt(model_type)} (architectures {excerpt(architectures)}) is not supported; "
        f"supported model_type: {', '.join(FAMILIES)}"
    )


def _text_model(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The text model's fields: a multimodal config's ``text_config`` over its top level
    (which holds the storage type and ``quantization_config``), else the config itself."""
    text = data.get("text_config")
    if text is None:
        return data
    if not isinstance(text, dict):
        raise SpecModelError(f"{where}: text_config must be an object, got {excerpt(text)}")
    return {**{k: v for k, v in data.items() if k not in ("model_type", "architectures")}, **text}


def _defaults(data: dict[str, Any], layout: str) -> dict[str, Any]:
    """The configuration class's defaults for what ``data`` leaves out."""
    return _MISTRAL_DEFAULTS if data.get("model_type") == "mistral" else DEFAULTS[layout]


def _checked(field: str, value: Any, where: str) -> Any:
    """``value`` if it has the type ``field`` takes (a whole number, a boolean, a list of
    whole numbers for ``mlp_only_layers``); else a one-line SpecModelError."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    if field in _INTEGERS and not whole:
        raise SpecModelError(f"{where}: {field} must be a whole number, got {excerpt(value)}")
    if field in _BOOLEANS and not isinstance(value, bool):
        raise SpecModelError(f"{where}: {field} must be true or false, got {excerpt(value)}")
    if field == "mlp_only_layers" and (
        not isinstance(value, list) or any(not isinstance(i, int) or isinstance(i, bool) for i in value)
    ):
        raise SpecModelError(f"{where}: mlp_only_layers must be a list of layer indices, got {excerpt(value)}")
    return value


def _layout_fields(layout: str) -> tuple[str, ...]:
    """The record fields read for ``layout`` besides the common ones."""
    return MOE_FIELDS.get(layout, ()) + ((*MLA_FIELDS, "q_lora_rank") if layout == "deepseek_v3" else ())


def _read_fields(text: dict[str, Any], layout: str, defaults: dict[str, Any], where: str) -> dict[str, Any]:
    """The record's fields from the text model's config.json fields, with aliases and defaults;
    a missing required field is a one-line SpecModelError naming it."""
    aliases = ALIASES.get(layout, {})
    optional = ("num_key_value_heads", "head_dim", "attention_bias", "q_lora_rank", "num_nextn_predict_layers")
    wanted = (*_SHAPE, "vocab_size", "max_position_embeddings", "tie_word_embeddings", *optional)
    out: dict[str, Any] = {}
    for field in dict.fromkeys((*wanted, *_layout_fields(layout))):
        name = aliases.get(field, field)
        value = text.get(name, defaults.get(field))
        if value is None and field in optional:
            continue
        if value is None:
            raise SpecModelError(f"{where}: {name} is missing; a {layout} model needs it")
        out[field] = _checked(name, value, where)
    out.setdefault("num_key_value_heads", out["num_attention_heads"])
    return out


def _storage_type(data: dict[str, Any], where: str) -> str:
    """``torch_dtype`` (or the newer ``dtype``): one of :data:`specmodel.model.specs.DTYPE_BYTES`."""
    dtype = data.get("torch_dtype", data.get("dtype"))
    if dtype not in DTYPE_BYTES:
        raise SpecModelError(
            f"{where}: torch_dtype {excerpt(dtype)} is not supported; allowed: {', '.join(DTYPE_BYTES)}"
        )
    return str(dtype)


def architecture_from_config(data: Any, key: str, source: str, name: str | None = None) -> Architecture:
    """The :class:`~specmodel.model.specs.Architecture` a parsed config.json describes, under
    ``key`` (and display ``name``, default the key), citing ``source``; a one-line
    SpecModelError naming the field for an unsupported layout, a missing field or a wrong type.

    >>> m = architecture_from_config({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
    ...     "num_attention_heads": 4, "intermediate_size": 256, "torch_dtype": "float16"}, "tiny", "example")
    >>> m.num_key_value_heads, m.head_dim, m.vocab_size, m.tie_word_embeddings
    (4, 16, 32000, False)
    """
    where = path_text(source)
    if not isinstance(data, dict):
        raise SpecModelError(f"{where}: a config.json holds one JSON object, got {excerpt(data)}")
    layout = config_layout(data, where)
    text = _text_model(data, where)
    fields = _read_fields(text, layout, _defaults(data, layout), where)
    fields["mlp_only_layers"] = tuple(fields["mlp_only_layers"]) if "mlp_only_layers" in fields else None
    quantization = data.get("quantization_config")
    if quantization is not None and not isinstance(quantization, dict):
        raise SpecModelError(f"{where}: quantization_config must be an object, got {excerpt(quantization)}")
    note = " (text_config; the vision tower is not priced)" if "text_config" in data else ""
    record = {
        **fields,
        "key": key,
        "name": name or key,
        "source": f"{source}{note}",
        "model_type": layout,
        "torch_dtype": _storage_type(text, where),
        "quantization_config": quantization,
    }
    return validated(Architecture, record, where)


#: A Hugging Face model id: ``org/name``.
_HF_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


def hub_cache() -> Path:
    """The local Hugging Face hub cache: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
    ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub`` (huggingface_hub's
    own order, huggingface_hub/constants.py)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    base = Path(os.environ["XDG_CACHE_HOME"]) if os.environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def cached_config(model_id: str) -> Path:
    """``config.json`` of ``model_id`` (``org/name``) in the local hub cache
    (``models--org--name/snapshots/<revision>/config.json``): the snapshot ``refs/main`` names,
    else the newest one holding a config.json; a one-line SpecModelError if none is cached.
    Never the network."""
    repo = hub_cache() / ("models--" + model_id.replace("/", "--"))
    ref = repo / "refs" / "main"
    if ref.is_file():
        named = repo / "snapshots" / read_limited_text(ref, path_text(ref), 256).strip() / "config.json"
        if named.is_file():
            return named
    snapshots = sorted((repo / "snapshots").glob("*/config.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    if not snapshots:
        raise SpecModelError(
            f"model {excerpt(model_id)} is not in the local Hugging Face cache ({path_text(hub_cache())}) "
            "and is read from there only: download its config.json first, or give a path to it"
        )
    return snapshots[0]


def _named(path: Path) -> tuple[str, str]:
    """(display name, key) of the model whose config.json is ``path``: its folder's name (the
    file's own name when it is not ``config.json``), or the model id's name for a snapshot of
    the hub cache or a file named ``org--name.json``; the key lower-case, in ``[a-z0-9._-]``.

    >>> _named(Path("/hub/models--Qwen--Qwen3-0.6B-Base/snapshots/abc/config.json"))
    ('Qwen3-0.6B-Base', 'qwen3-0.6b-base')
    """
    folder = path.parent
    if path.name != "config.json":
        name = path.stem
    elif folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
        name = folder.parent.parent.name
    else:
        name = folder.name
    name = name.split("--")[-1] or "model"
    return name, re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-") or "model"


def config_file(spec: str) -> Path:
    """The config.json ``spec`` names: a path to one, a model folder holding one, or a Hugging
    Face id found in the local cache; a one-line SpecModelError otherwise."""
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise SpecModelError(f"model folder {path_text(path)} holds no config.json")
        return path / "config.json"
    if path.exists() or not _HF_ID.fullmatch(spec):
        return path
    return cached_config(spec)


def _free_key(arch: Architecture) -> Architecture:
    """``arch`` under its key, or a suffixed one where a known model of that key is another
    network (a config never replaces a catalogue entry)."""
    known = architecture_catalog()
    key, n = arch.key, 1
    while key in known and not same_network(known[key], replace(arch, key=key)):
        n += 1
        key = f"{arch.key}-config" if n == 2 else f"{arch.key}-config-{n - 1}"
    return arch if key == arch.key else replace(arch, key=key)


def load_config(spec: str) -> Architecture:
    """The architecture of the model ``spec`` names (see :func:`config_file`), keyed by a short
    lower-case name from its folder or id (``Qwen/Qwen3-0.6B-Base``: ``qwen3-0.6b-base``),
    suffixed ``-config`` where a catalogue key holds another network. Read within the bounds
    of :mod:`specmodel.safe_input`; not registered (:func:`resolve_model` registers it)."""
    path = config_file(spec)
    if spec and _HF_ID.fullmatch(spec) and not Path(spec).expanduser().exists():
        name = spec.split("/")[1]
        key = re.sub(r"[^a-z0-9._-]+", "-", name.lower())
    else:
        name, key = _named(path.resolve())
    where = path_text(path)
    data = load_json_text(read_limited_text(path, where), where, MAX_TEXT_BYTES)
    return _free_key(architecture_from_config(data, key, str(path), name))


def resolve_model(name_or_path: str) -> str:
    """The key of the model ``name_or_path`` names: a catalogue key as it is; a catalogue
    model's own name or Hugging Face id (``meta-llama/Llama-3.1-8B-Instruct``); else the model
    read by :func:`load_config` and registered (:func:`specmodel.model.specs.add_architecture`),
    so that :func:`specmodel.model.specs.get_architecture` finds it. A name that only extends a
    catalogue model's (``Qwen/Qwen3-8B-AWQ``) is read from its own config.json, never taken to
    be the catalogue model: its format may differ.

    >>> resolve_model("qwen3-8b"), resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    ('qwen3-8b', 'llama-3.1-8b')
    """
    if name_or_path in architecture_catalog():
        return name_or_path
    exists = Path(name_or_path).expanduser().exists()
    named = catalogue_model(name_or_path, exact=True)
    if named is not None and not exists:
        return named
    if not exists and not _HF_ID.fullmatch(name_or_path):
        raise SpecModelError(
            f"unknown model {excerpt(name_or_path)}; allowed: {', '.join(architecture_catalog())}, or a config.json, "
            "a model folder, or a Hugging Face id (org/name) in the local Hugging Face cache"
        )
    return add_architecture(load_config(name_or_path))


#: What may follow a catalogue model's name in a served name (``Qwen3-8B-AWQ``, ``...:latest``).
_SEPARATORS = "-_.:@ "


def _normal(name: str) -> str:
    """``meta-llama/Meta-Llama-3-70B-Instruct/`` -> ``llama-3-70b-instruct``."""
    last = name.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    return last.removeprefix("meta-")


def catalogue_model(served_name: str, exact: bool = False) -> str | None:
    """The catalogue key of the model ``served_name`` names (a server's ``--served-model-name``,
    a path or a Hugging Face id), or None if it names none.

    The name is matched by its last path component, case-insensitively and without a leading
    ``Meta-``, against each catalogue model's Hugging Face name (``name`` in
    ``data/models.toml``, also without a trailing ``-Instruct``) and key: equal, or (unless
    ``exact``) followed by a separator and more (``Qwen3-8B-AWQ``); an ``-Instruct`` model is its
    base's network (the same config.json). The longest match wins.

    >>> catalogue_model("meta-llama/Llama-3.1-70B-Instruct"), catalogue_model("Qwen/Qwen3-8B-AWQ")
    ('llama-3.1-70b', 'qwen3-8b')
    >>> catalogue_model("/models/Meta-Llama-3-70B"), catalogue_model("my-chat-model")
    ('llama-3-70b', None)
    >>> catalogue_model("Qwen/Qwen3-8B-AWQ", exact=True) is None
    True
    """
    served = _normal(served_name)
    best, length = None, 0
    for key, architecture in architecture_catalog().items():
        name = _normal(architecture.name)
        for stem in {name, re.sub(r"-instruct$", "", name), key}:
            extends = not exact and served.startswith(stem) and served[len(stem) : len(stem) + 1] in tuple(_SEPARATORS)
            same = served in (stem, stem + "-instruct")  # an instruct model has its base's config
            if (same or extends) and len(stem) > length:
                best, length = key, len(stem)
    return best
