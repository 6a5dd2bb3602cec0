"""Typed records for hardware and model architectures, loaded from data files.

The records (:mod:`specmodel.records`: each field's rules in its type, every rule checked
where data comes from a user) hold only what a datasheet or a ``config.json`` states. Everything derived
(parameter counts, bytes, FLOPs) lives in :mod:`specmodel.model.architecture`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Annotated, Any, Literal, TypeVar, get_args

from annotated_types import Ge, Gt, MinLen

from specmodel.errors import SpecModelError
from specmodel.records import Record, as_mapping, structure

#: Bytes per element of each storage type a config.json may name.
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}

_T = TypeVar("_T")

#: The layouts (config.json ``model_type``) :mod:`specmodel.model.architecture` can count.
#: A Mistral config.json is read as ``llama``: transformers' ``MistralForCausalLM`` is Llama's
#: layout (mistral/modular_mistral.py derives it from Llama's classes; q/k/v/o without biases).
ModelType = Literal[
    "llama",
    "qwen2",
    "qwen3",
    "gemma2",
    "gemma3_text",
    "mixtral",
    "qwen2_moe",
    "qwen3_moe",
    "deepseek_v3",
]
MODEL_TYPES: tuple[str, ...] = get_args(ModelType)

#: The mixture-of-experts fields each MoE layout's config.json gives (under the record's names).
MOE_FIELDS: dict[str, tuple[str, ...]] = {
    "qwen3_moe": (
        "num_experts",
        "num_experts_per_tok",
        "moe_intermediate_size",
        "decoder_sparse_step",
        "mlp_only_layers",
        "norm_topk_prob",
    ),
    "qwen2_moe": (
        "num_experts",
        "num_experts_per_tok",
        "moe_intermediate_size",
        "decoder_sparse_step",
        "mlp_only_layers",
        "norm_topk_prob",
        "shared_expert_intermediate_size",
    ),
    "mixtral": ("num_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "deepseek_v3": (
        "num_experts",
        "num_experts_per_tok",
        "moe_intermediate_size",
        "norm_topk_prob",
        "n_shared_experts",
        "first_k_dense_replace",
        "moe_layer_freq",
    ),
}
#: Multi-head latent attention's fields (``deepseek_v3`` only); ``q_lora_rank`` may be absent.
MLA_FIELDS = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


@dataclass(frozen=True, kw_only=True)
class Sourced(Record):
    """A number with its unit and where it comes from."""

    value: Annotated[float, Gt(0)]
    unit: str
    source: Annotated[str, MinLen(1)]


@dataclass(frozen=True, kw_only=True)
class Interconnect(Record):
    """The links a tensor-parallel all-reduce runs over (SI units: B/s, s).

    ``bandwidth`` is what one GPU sends in each direction: over all its links for a
    ``switch`` (NVSwitch, a PCIe switch: the same for any group), per link for a ``mesh`` of
    point-to-point links (a group of N_g GPUs then has N_g - 1 links per GPU among its members).
    An all-reduce over N_g GPUs pays ``allreduce_latency`` plus ``hop_latency`` for each of
    the ring's 2(N_g - 1) steps."""

    name: str
    topology: Literal["switch", "mesh"]
    bandwidth: Sourced
    allreduce_latency: Sourced
    hop_latency: Sourced
    max_tensor_parallel: Sourced

    def __post_init__(self) -> None:
        expected = {"bandwidth": "B/s", "allreduce_latency": "s", "hop_latency": "s", "max_tensor_parallel": "GPUs"}
        for field, unit in expected.items():
            if getattr(self, field).unit != unit:
                raise ValueError(f"interconnect {field} must be given in {unit}")
        if not float(self.max_tensor_parallel.value).is_integer():
            raise ValueError("interconnect max_tensor_parallel must be a whole number of GPUs")


@dataclass(frozen=True, kw_only=True)
class Hardware(Record):
    """One accelerator's peak figures (SI units: B/s, FLOP/s, B) and its GPU-to-GPU links.

    ``memory_capacity`` is the memory the card reports (nvidia-smi's or rocm-smi's total, in
    bytes), the whole that a server's usable share is taken of; ``datasheet_memory_capacity``
    is the vendor's figure in decimal units ("80 GB"), which names the card and nothing else.
    The two differ: an H100 SXM reports 81,559 MiB (79.65 GiB) of its datasheet's 80 GB.

    ``peak_flops`` is the dense BF16 tensor-core peak every pass's arithmetic runs at;
    ``fp8_peak_flops`` and ``int8_peak_flops`` are the dense (no sparsity) FP8 and INT8
    tensor-core peaks that a model's quantized linear layers run at
    (:mod:`specmodel.model.quantization`), None for a card without such tensor cores (an A100
    has no FP8 ones)."""

    key: str
    name: str
    memory_bandwidth: Sourced
    peak_flops: Sourced
    memory_capacity: Sourced
    datasheet_memory_capacity: Sourced
    interconnect: Interconnect
    fp8_peak_flops: Sourced | None = None
    int8_peak_flops: Sourced | None = None

    def __post_init__(self) -> None:
        expected = {
            "memory_bandwidth": "B/s",
            "peak_flops": "FLOP/s",
            "memory_capacity": "B",
            "datasheet_memory_capacity": "B",
            "fp8_peak_flops": "FLOP/s",
            "int8_peak_flops": "OP/s",
        }
        for field, unit in expected.items():
            value = getattr(self, field)
            if value is not None and value.unit != unit:
                raise ValueError(f"{field} must be given in {unit}")


@dataclass(frozen=True, kw_only=True)
class PublishedParameters(Record):
    """A model card's stated parameter count (the total, or for a mixture-of-experts model
    also the count activated per token), with where it is stated.

    Kept only as an independent anchor for the catalogue tests: nothing in the model reads it.
    """

    value: Annotated[float, Gt(0)]
    source: Annotated[str, MinLen(1)]


@dataclass(frozen=True, kw_only=True)
class Architecture(Record):
    """A decoder-only transformer as its config.json describes it.

    ``model_type`` is config.json's family name (one of :data:`MODEL_TYPES`); it selects the
    per-layer layout in :mod:`specmodel.model.architecture` (Qwen3 adds q/k RMSNorms, Qwen2
    q/k/v biases, Gemma four RMSNorms a layer, DeepSeek-V3 latent attention). A
    configurable ``attention_bias`` is copied from config.json and must be false (a layout
    whose biases are fixed, as Qwen2's, counts them whatever this field says).

    Notation used across the project: L layers, D hidden size, N query heads,
    K KV heads, H head dim, F MLP width, V vocabulary.

    ``head_dim`` may be left out, as Llama-3.1's config.json does: it is then
    ``hidden_size // num_attention_heads``, the default of transformers' ``LlamaConfig``.

    A mixture-of-experts model also copies config.json's ``num_experts`` (E; Mixtral's
    ``num_local_experts``, DeepSeek's ``n_routed_experts``), ``num_experts_per_tok`` (k),
    ``moe_intermediate_size`` (F_moe, one routed expert's MLP width; Mixtral's
    ``intermediate_size``) and the fields of :data:`MOE_FIELDS` its layout has; they are all
    given for such a model and none for a dense one. Which layers are MoE and what they count
    is :mod:`specmodel.model.architecture`'s business.

    ``num_nextn_predict_layers`` counts the multi-token-prediction modules a checkpoint ships
    (DeepSeek-V3: 1), 0 where config.json has no such field. ``quantization_config`` is
    config.json's block, kept as read and not priced here. ``published_parameters`` is given
    for every catalogue entry and may be absent for a model read from a user's config.json.

    >>> get_architecture("llama-3.1-8b").head_dim
    128
    >>> m = get_architecture("qwen3-30b-a3b")
    >>> m.num_experts, m.num_experts_per_tok, m.moe_intermediate_size
    (128, 8, 768)
    """

    key: str
    name: str
    source: Annotated[str, MinLen(1)]
    model_type: ModelType
    hidden_size: Annotated[int, Gt(0)]
    num_hidden_layers: Annotated[int, Gt(0)]
    num_attention_heads: Annotated[int, Gt(0)]
    num_key_value_heads: Annotated[int, Gt(0)]
    head_dim: Annotated[int, Gt(0)]
    intermediate_size: Annotated[int, Gt(0)]
    vocab_size: Annotated[int, Gt(0)]
    tie_word_embeddings: bool
    torch_dtype: Literal["bfloat16", "float16", "float32"]
    #: Longest sequence (prompt plus generated tokens) the model was built for.
    max_position_embeddings: Annotated[int, Gt(0)]
    attention_bias: bool = False
    #: Mixture of experts only (config.json of ``qwen3_moe``): experts per MoE layer (E).
    num_experts: Annotated[int, Gt(0)] | None = None
    #: Experts each token is routed to in each MoE layer (k, top-k routing).
    num_experts_per_tok: Annotated[int, Gt(0)] | None = None
    #: One expert's MLP width (F_moe); dense layers keep ``intermediate_size``.
    moe_intermediate_size: Annotated[int, Gt(0)] | None = None
    #: Every ``decoder_sparse_step``-th layer is MoE (transformers' ``Qwen3MoeDecoderLayer``).
    decoder_sparse_step: Annotated[int, Gt(0)] | None = None
    #: 0-based indices of layers that keep a dense MLP whatever ``decoder_sparse_step`` says.
    mlp_only_layers: tuple[int, ...] | None = None
    #: Whether the top-k routing weights are renormalised to sum to 1 (no effect on counts).
    norm_topk_prob: bool | None = None
    #: ``qwen2_moe``: the MLP width of the one shared expert every token goes through.
    shared_expert_intermediate_size: Annotated[int, Gt(0)] | None = None
    #: ``deepseek_v3``: shared experts of width ``moe_intermediate_size`` every token goes through.
    n_shared_experts: Annotated[int, Ge(0)] | None = None
    #: ``deepseek_v3``: the first layers keep a dense MLP of width ``intermediate_size``.
    first_k_dense_replace: Annotated[int, Ge(0)] | None = None
    #: ``deepseek_v3``: past the dense layers, every ``moe_layer_freq``-th layer is MoE.
    moe_layer_freq: Annotated[int, Gt(0)] | None = None
    #: Multi-head latent attention (``deepseek_v3``): rank of the query compression (None: full q_proj).
    q_lora_rank: Annotated[int, Gt(0)] | None = None
    #: Rank of the compressed key-value latent, what the cache holds per layer with the rope key.
    kv_lora_rank: Annotated[int, Gt(0)] | None = None
    #: Per-head query/key width without rotary embedding.
    qk_nope_head_dim: Annotated[int, Gt(0)] | None = None
    #: Per-head query/key width with rotary embedding (the key part is shared by all heads).
    qk_rope_head_dim: Annotated[int, Gt(0)] | None = None
    #: Per-head value width.
    v_head_dim: Annotated[int, Gt(0)] | None = None
    #: Multi-token-prediction modules shipped with the checkpoint (config.json's name; 0 where absent).
    num_nextn_predict_layers: Annotated[int, Ge(0)] = 0
    #: config.json's ``quantization_config`` block as read, not priced here.
    quantization_config: dict[str, Any] | None = None
    #: Storage of the decoder layers' linear weights (:mod:`specmodel.model.quantization`):
    #: None keeps ``torch_dtype``; the embeddings, output head, norms and routers keep it always.
    weight_format: Literal["fp8", "int8", "int4"] | None = None
    #: Storage of the KV cache: None keeps ``torch_dtype``, "fp8" one byte an element.
    kv_cache_format: Literal["fp8"] | None = None
    #: The model card's total, for the catalogue test only (see :class:`PublishedParameters`).
    published_parameters: PublishedParameters | None = None
    #: A mixture-of-experts model card's activated count, a second anchor for the tests only.
    published_active_parameters: PublishedParameters | None = None

    @staticmethod
    def prepared(data: dict[str, Any]) -> dict[str, Any]:
        """A config.json without ``head_dim`` means ``hidden_size // num_attention_heads``."""
        if data.get("head_dim") is None:
            d, n = data.get("hidden_size"), data.get("num_attention_heads")
            if isinstance(d, int) and isinstance(n, int) and n > 0:
                if d % n:
                    raise ValueError("head_dim is missing and hidden_size is not a multiple of num_attention_heads")
                data = {**data, "head_dim": d // n}
        return data

    def __post_init__(self) -> None:
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")
        if self.attention_bias:
            raise ValueError(
                "attention_bias = true is not supported: the parameter count assumes bias-free projections"
            )
        self._check_layout_fields()
        self._check_experts()

    def _check_layout_fields(self) -> None:
        """A layout's own fields (:data:`MOE_FIELDS`, :data:`MLA_FIELDS`) come all together, and
        only for that layout."""
        needed = MOE_FIELDS.get(self.model_type, ()) + (MLA_FIELDS if self.model_type == "deepseek_v3" else ())
        optional = ("q_lora_rank",) if self.model_type == "deepseek_v3" else ()
        every = {f for fields in MOE_FIELDS.values() for f in fields} | set(MLA_FIELDS) | {"q_lora_rank"}
        missing = [f for f in needed if getattr(self, f) is None]
        if missing:
            raise ValueError(f"a {self.model_type} model needs {', '.join(missing)} (copied from config.json)")
        extra = sorted(f for f in every - set(needed) - set(optional) if getattr(self, f) is not None)
        if extra:
            raise ValueError(
                f"{', '.join(extra)} only apply to a mixture-of-experts or latent-attention layout, "
                f"not to model_type {self.model_type}"
            )

    def _check_experts(self) -> None:
        """The MoE fields describe a valid routing."""
        e, k = self.num_experts, self.num_experts_per_tok
        if e is not None and k is not None and k > e:
            raise ValueError("num_experts_per_tok cannot exceed num_experts")
        layers = self.mlp_only_layers or ()
        if any(not 0 <= i < self.num_hidden_layers for i in layers) or len(set(layers)) != len(layers):
            raise ValueError("mlp_only_layers must be distinct layer indices in [0, num_hidden_layers)")
        if self.published_active_parameters is not None and self.model_type not in MOE_FIELDS:
            raise ValueError(
                "published_active_parameters is for mixture-of-experts models (a dense model's is its total)"
            )

    def __hash__(self) -> int:
        """By key and layout (``quantization_config``, a dict, cannot be hashed); equal records
        hash alike."""
        return hash((self.key, self.model_type, self.hidden_size, self.num_hidden_layers))

    @property
    def bytes_per_element(self) -> int:
        """Bytes per stored weight and cache element, from ``torch_dtype``."""
        return DTYPE_BYTES[self.torch_dtype]


_R = TypeVar("_R")


def catalog_tables(filename: str) -> dict[str, dict[str, Any]]:
    """The tables of ``data/<filename>`` by key, each with its ``key`` (TOML as read)."""
    text = resources.files("specmodel.data").joinpath(filename).read_text(encoding="utf-8")
    return {k: {"key": k, **v} for k, v in tomllib.loads(text).items()}


def load_catalog(filename: str, record: type[_R]) -> dict[str, _R]:
    """Every record of ``data/<filename>`` (a TOML table per key) as a ``record``
    (:func:`specmodel.records.structure`: packaged data, checked against the records' every
    rule by the tests); a cross-field rule broken is a packaging error, one SpecModelError."""
    try:
        return {k: structure(record, table) for k, table in catalog_tables(filename).items()}
    except (ValueError, TypeError) as exc:
        raise SpecModelError(f"data/{filename} is invalid: {exc}") from exc


def lookup(catalog: dict[str, _T], key: str, what: str) -> _T:
    """``catalog[key]``; an unknown key (or one of the wrong type) lists the known ones."""
    try:
        return catalog[key]
    except (KeyError, TypeError):
        allowed = ", ".join(catalog)
        raise SpecModelError(f"unknown {what} {key!r}; allowed: {allowed}") from None


@cache
def _catalogue_hardware() -> dict[str, Hardware]:
    """The accelerators of ``data/hardware.toml``, by key."""
    return load_catalog("hardware.toml", Hardware)


@cache
def added_hardware() -> dict[str, Hardware]:
    """Accelerators read from a user's card file this run (:func:`add_hardware`), by key: one
    dict per process, filled as cards are added."""
    return {}


def add_hardware(hw: Hardware) -> str:
    """Register ``hw`` (read from a card file, :mod:`specmodel.model.hardware_file`) so that
    :func:`get_hardware` finds it by its key; returns the key. Re-adding an identical record
    changes nothing; a catalogue key (or an added one) holding other values is refused with a
    SpecModelError.

    >>> add_hardware(get_hardware("h100-sxm"))
    'h100-sxm'
    """
    held = _catalogue_hardware().get(hw.key) or added_hardware().get(hw.key)
    if held is not None:
        if held == hw:
            return hw.key
        raise SpecModelError(f"hardware key {hw.key!r} already names a card with other values; choose another key")
    added_hardware()[hw.key] = hw
    return hw.key


def hardware_catalog() -> dict[str, Hardware]:
    """All accelerators by key: ``data/hardware.toml``'s, then any added from a card file."""
    return {**_catalogue_hardware(), **added_hardware()}


@cache
def _catalogue_architectures() -> dict[str, Architecture]:
    """The model architectures of ``data/models.toml``, each with its model card's count."""
    catalog = load_catalog("models.toml", Architecture)
    unanchored = [k for k, a in catalog.items() if a.published_parameters is None]
    if unanchored:
        raise SpecModelError(f"data/models.toml is invalid: {', '.join(unanchored)} lack published_parameters")
    return catalog


@cache
def added_architectures() -> dict[str, Architecture]:
    """Architectures read from a user's config.json in this run (:func:`add_architecture`), by
    key: one table for the process, kept apart from the catalogue's."""
    return {}


#: Fields that describe a record, not the network it counts.
_DESCRIPTIVE = {"key", "name", "source", "published_parameters", "published_active_parameters", "quantization_config"}


def same_network(a: Architecture, b: Architecture) -> bool:
    """Whether ``a`` and ``b`` describe the same network (every field but name, source,
    published counts and ``quantization_config``).

    >>> from dataclasses import replace
    >>> m = get_architecture("qwen3-8b")
    >>> same_network(m, replace(m, name="mine")), same_network(m, get_architecture("qwen3-4b"))
    (True, False)
    """
    return as_mapping(a, _DESCRIPTIVE) == as_mapping(b, _DESCRIPTIVE)


def add_architecture(arch: Architecture) -> str:
    """Register ``arch`` (read from a config.json) so that :func:`get_architecture` finds it by
    its key; returns the key. Re-adding an identical record, or one whose network is a
    catalogue entry's under that entry's key, changes nothing; a catalogue key (or an added
    one) holding another network is refused with a SpecModelError.

    >>> from dataclasses import replace
    >>> m = get_architecture("qwen3-8b")
    >>> add_architecture(replace(m, name="my copy", published_parameters=None))
    'qwen3-8b'
    """
    added = added_architectures()
    held = _catalogue_architectures().get(arch.key) or added.get(arch.key)
    if held is not None:
        if same_network(held, arch):
            return arch.key
        raise SpecModelError(f"model key {arch.key!r} already names another architecture; choose another key")
    added[arch.key] = arch
    return arch.key


def architecture_catalog() -> dict[str, Architecture]:
    """All model architectures by key: ``data/models.toml``'s, then any added from a config.json."""
    return {**_catalogue_architectures(), **added_architectures()}


def get_hardware(key: str) -> Hardware:
    """The accelerator called ``key`` (e.g. ``"h100-sxm"``)."""
    return lookup(hardware_catalog(), key, "hardware")


def get_architecture(key: str) -> Architecture:
    """The model architecture called ``key`` (e.g. ``"qwen3-8b"``)."""
    return lookup(architecture_catalog(), key, "model")
