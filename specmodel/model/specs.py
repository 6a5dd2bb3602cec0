"""Typed, validated records for hardware and model architectures, loaded from data files.

The records hold only what a datasheet or a ``config.json`` states. Everything derived
(parameter counts, bytes, FLOPs) lives in :mod:`specmodel.model.architecture`.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from specmodel.errors import SpecModelError

#: Bytes per element of each storage type a config.json may name.
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}

_T = TypeVar("_T")


class Sourced(BaseModel):
    """A number with its unit and where it comes from."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    value: float = Field(gt=0)
    unit: str
    source: str = Field(min_length=1)


class Interconnect(BaseModel):
    """The links a tensor-parallel all-reduce runs over (SI units: B/s, s).

    ``bandwidth`` is what one GPU sends in each direction: over all its links for a
    ``switch`` (NVSwitch, a PCIe switch: the same for any group), per link for a ``mesh`` of
    point-to-point links (a group of N_g GPUs then has N_g - 1 links per GPU among its members).
    An all-reduce over N_g GPUs pays ``allreduce_latency`` plus ``hop_latency`` for each of
    the ring's 2(N_g - 1) steps."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    topology: Literal["switch", "mesh"]
    bandwidth: Sourced
    allreduce_latency: Sourced
    hop_latency: Sourced
    max_tensor_parallel: Sourced

    @model_validator(mode="after")
    def _units(self) -> Interconnect:
        expected = {"bandwidth": "B/s", "allreduce_latency": "s", "hop_latency": "s", "max_tensor_parallel": "GPUs"}
        for field, unit in expected.items():
            if getattr(self, field).unit != unit:
                raise ValueError(f"interconnect {field} must be given in {unit}")
        if not float(self.max_tensor_parallel.value).is_integer():
            raise ValueError("interconnect max_tensor_parallel must be a whole number of GPUs")
        return self


class Hardware(BaseModel):
    """One accelerator's peak figures (SI units: B/s, FLOP/s, B) and its GPU-to-GPU links.

    ``memory_capacity`` is the memory the card reports (nvidia-smi's or rocm-smi's total, in
    bytes), the whole that a server's usable share is taken of; ``datasheet_memory_capacity``
    is the vendor's figure in decimal units ("80 GB"), which names the card and nothing else.
    The two differ: an H100 SXM reports 81,559 MiB (79.65 GiB) of its datasheet's 80 GB."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str
    name: str
    memory_bandwidth: Sourced
    peak_flops: Sourced
    memory_capacity: Sourced
    datasheet_memory_capacity: Sourced
    interconnect: Interconnect

    @model_validator(mode="after")
    def _units(self) -> Hardware:
        expected = {
            "memory_bandwidth": "B/s",
            "peak_flops": "FLOP/s",
            "memory_capacity": "B",
            "datasheet_memory_capacity": "B",
        }
        for field, unit in expected.items():
            if getattr(self, field).unit != unit:
                raise ValueError(f"{field} must be given in {unit}")
        return self


class PublishedParameters(BaseModel):
    """A model card's stated parameter count (the total, or for a mixture-of-experts model
    also the count activated per token), with where it is stated.

    Kept only as an independent anchor for the catalogue tests: nothing in the model reads it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    value: float = Field(gt=0)
    source: str = Field(min_length=1)


class Architecture(BaseModel):
    """A decoder-only transformer as its config.json describes it (Qwen3 or Llama layout).

    ``model_type`` is config.json's family name; it selects the per-layer layout in
    :mod:`specmodel.model.architecture` (Qwen3 adds q/k RMSNorms). Attention biases are not
    supported: ``attention_bias`` is copied from config.json and must be false.

    Notation used across the project: L layers, D hidden size, N query heads,
    K KV heads, H head dim, F MLP width, V vocabulary.

    ``head_dim`` may be left out, as Llama-3.1's config.json does: it is then
    ``hidden_size // num_attention_heads``, the default of transformers' ``LlamaConfig``.

    A mixture-of-experts model (``model_type = "qwen3_moe"``) also copies config.json's
    ``num_experts`` (E), ``num_experts_per_tok`` (k), ``moe_intermediate_size`` (F_moe, one
    expert's MLP width), ``decoder_sparse_step``, ``mlp_only_layers`` and ``norm_topk_prob``;
    they are all given for such a model and none for a dense one. Which layers are MoE and
    what they count is :mod:`specmodel.model.architecture`'s business.

    >>> get_architecture("llama-3.1-8b").head_dim
    128
    >>> m = get_architecture("qwen3-30b-a3b")
    >>> m.num_experts, m.num_experts_per_tok, m.moe_intermediate_size
    (128, 8, 768)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str
    name: str
    source: str = Field(min_length=1)
    model_type: Literal["qwen3", "llama", "qwen3_moe"]
    hidden_size: int = Field(gt=0)
    num_hidden_layers: int = Field(gt=0)
    num_attention_heads: int = Field(gt=0)
    num_key_value_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    intermediate_size: int = Field(gt=0)
    vocab_size: int = Field(gt=0)
    tie_word_embeddings: bool
    torch_dtype: Literal["bfloat16", "float16", "float32"]
    #: Longest sequence (prompt plus generated tokens) the model was built for.
    max_position_embeddings: int = Field(gt=0)
    attention_bias: bool = False
    #: Mixture of experts only (config.json of ``qwen3_moe``): experts per MoE layer (E).
    num_experts: int | None = Field(default=None, gt=0)
    #: Experts each token is routed to in each MoE layer (k, top-k routing).
    num_experts_per_tok: int | None = Field(default=None, gt=0)
    #: One expert's MLP width (F_moe); dense layers keep ``intermediate_size``.
    moe_intermediate_size: int | None = Field(default=None, gt=0)
    #: Every ``decoder_sparse_step``-th layer is MoE (transformers' ``Qwen3MoeDecoderLayer``).
    decoder_sparse_step: int | None = Field(default=None, gt=0)
    #: 0-based indices of layers that keep a dense MLP whatever ``decoder_sparse_step`` says.
    mlp_only_layers: tuple[int, ...] | None = None
    #: Whether the top-k routing weights are renormalised to sum to 1 (no effect on counts).
    norm_topk_prob: bool | None = None
    #: The model card's total, for the catalogue test only (see :class:`PublishedParameters`).
    published_parameters: PublishedParameters
    #: A mixture-of-experts model card's activated count, a second anchor for the tests only.
    published_active_parameters: PublishedParameters | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_head_dim(cls, data):
        """A config.json without ``head_dim`` means ``hidden_size // num_attention_heads``."""
        if isinstance(data, dict) and data.get("head_dim") is None:
            d, n = data.get("hidden_size"), data.get("num_attention_heads")
            if isinstance(d, int) and isinstance(n, int) and n > 0:
                if d % n:
                    raise ValueError("head_dim is missing and hidden_size is not a multiple of num_attention_heads")
                data = {**data, "head_dim": d // n}
        return data

    @model_validator(mode="after")
    def _grouped_query(self) -> Architecture:
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")
        return self

    @model_validator(mode="after")
    def _no_attention_bias(self) -> Architecture:
        if self.attention_bias:
            raise ValueError(
                "attention_bias = true is not supported: the parameter count assumes bias-free projections"
            )
        return self

    @model_validator(mode="after")
    def _experts(self) -> Architecture:
        """The MoE fields come all together, for ``qwen3_moe`` only, and describe a valid routing."""
        moe = {
            "num_experts": self.num_experts,
            "num_experts_per_tok": self.num_experts_per_tok,
            "moe_intermediate_size": self.moe_intermediate_size,
            "decoder_sparse_step": self.decoder_sparse_step,
            "mlp_only_layers": self.mlp_only_layers,
            "norm_topk_prob": self.norm_topk_prob,
        }
        given = [name for name, value in moe.items() if value is not None]
        if self.model_type == "qwen3_moe":
            missing = [name for name in moe if name not in given]
            if missing:
                raise ValueError(f"a qwen3_moe model needs {', '.join(missing)} (copied from config.json)")
        elif given:
            raise ValueError(f"{', '.join(given)} only apply to a mixture-of-experts model (model_type qwen3_moe)")
        e, k = self.num_experts, self.num_experts_per_tok
        if e is not None and k is not None and k > e:
            raise ValueError("num_experts_per_tok cannot exceed num_experts")
        layers = self.mlp_only_layers or ()
        if any(not 0 <= i < self.num_hidden_layers for i in layers) or len(set(layers)) != len(layers):
            raise ValueError("mlp_only_layers must be distinct layer indices in [0, num_hidden_layers)")
        if self.published_active_parameters is not None and self.model_type != "qwen3_moe":
            raise ValueError(
                "published_active_parameters is for mixture-of-experts models (a dense model's is its total)"
            )
        return self

    @property
    def bytes_per_element(self) -> int:
        """Bytes per stored weight and cache element, from ``torch_dtype``."""
        return DTYPE_BYTES[self.torch_dtype]


_R = TypeVar("_R", bound=BaseModel)


def load_catalog(filename: str, record: type[_R]) -> dict[str, _R]:
    """Every record of ``data/<filename>`` (a TOML table per key), validated as ``record``;
    a broken data file is a packaging error, reported as one SpecModelError."""
    text = resources.files("specmodel.data").joinpath(filename).read_text(encoding="utf-8")
    try:
        return {k: record(key=k, **v) for k, v in tomllib.loads(text).items()}
    except ValidationError as exc:
        raise SpecModelError(f"data/{filename} is invalid: {exc}") from exc


def lookup(catalog: dict[str, _T], key: str, what: str) -> _T:
    """``catalog[key]``; an unknown key (or one of the wrong type) lists the known ones."""
    try:
        return catalog[key]
    except (KeyError, TypeError):
        allowed = ", ".join(catalog)
        raise SpecModelError(f"unknown {what} {key!r}; allowed: {allowed}") from None


@cache
def hardware_catalog() -> dict[str, Hardware]:
    """All accelerators in ``data/hardware.toml``, by key."""
    return load_catalog("hardware.toml", Hardware)


@cache
def architecture_catalog() -> dict[str, Architecture]:
    """All model architectures in ``data/models.toml``, by key."""
    return load_catalog("models.toml", Architecture)


def get_hardware(key: str) -> Hardware:
    """The accelerator called ``key`` (e.g. ``"h100-sxm"``)."""
    return lookup(hardware_catalog(), key, "hardware")


def get_architecture(key: str) -> Architecture:
    """The model architecture called ``key`` (e.g. ``"qwen3-8b"``)."""
    return lookup(architecture_catalog(), key, "model")
