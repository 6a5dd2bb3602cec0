"""The deployment ``advise`` prices: what the server's own files state, what the command line
says, and which of the two wins.

Every field of the deployment (the model, the card, the GPUs, the drafter, the load, the
lengths, the formats) is settled by one rule, :func:`settle`:

* stated by the files only: the files' value, with where it was read;
* given on the command line only: the option's value;
* both: the option must agree with the files, or the user says it replaces them
  (``--override``); an option that contradicts a file is refused, naming both;
* neither: refused with what to give, for what identifies the deployment (model, card,
  GPUs, drafter, load); a workload length the files do not state takes the model's default
  and the output says so. No deployment is ever defaulted silently.

The load is what the server actually ran: the running-request samples of its log, scrapes or
benchmark files (:mod:`specmodel.vllm.deployment`). The advice is priced at their median over
the busy samples (those with a request running), and a server seen running B requests is taken
to hold them: what it ran wins over the model's memory estimate.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.model.scenario import DEFAULTS
from specmodel.model.settings import Settings
from specmodel.records import as_mapping
from specmodel.safe_input import excerpt
from specmodel.vllm.deployment import ServerDeployment, Stated, busy_samples, running_summary
from specmodel.vllm.speculative_config import ServedDrafter

#: Two lengths (prompt or generated tokens) agree when within this share of each other: a
#: file states a mean, the option a round number.
LENGTH_AGREEMENT = 0.10


@dataclass(frozen=True)
class Known:
    """A settled value and where it came from (an option, a file's line, a default)."""

    value: Any
    where: str


@dataclass(frozen=True)
class AdvisedDeployment:
    """Everything ``advise`` prices, settled (:func:`resolve`), with where each value came from."""

    target: str  #: model key (catalogue, config.json or quantized variant)
    hardware: str  #: card key
    tensor_parallel: int
    served: ServedDrafter
    concurrency: int
    context: int
    settings: Settings  #: with the stated generated tokens, memory share and token budget
    observed: bool  #: the concurrency is what the server was seen running
    running: dict[str, float] | None  #: the distribution of running requests, when stated
    provenance: tuple[tuple[str, str], ...] = field(default=())  #: (field, where its value came from)
    engine_version: str | None = None  #: the server's vLLM version, where its files state it


def settle(
    label: str,
    option: str,
    given: Any,
    stated: Stated | None,
    override: bool,
    agree: Callable[[Any, Any], bool] = operator.eq,
    show: Callable[[Any], str] | None = None,
) -> Known | None:
    """The value of one field by the module's rule: the option where it agrees with the files
    or ``override`` says it replaces them, the files' value where no option is given, None
    where neither states it. An option contradicting a file is refused, naming both.

    >>> settle("tensor_parallel_size", "--tensor-parallel", 4, None, False)
    Known(value=4, where='--tensor-parallel')
    >>> settle("tensor_parallel_size", "--tensor-parallel", 2, Stated(4, "--log v.log line 3"), False)
    Traceback (most recent call last):
    ...
    specmodel.errors.SpecModelError: --tensor-parallel 2 contradicts --log v.log line 3, which states ...
    """
    show = show or value_text
    if given is None:
        return None if stated is None else Known(stated.value, stated.where)
    if stated is None or agree(given, stated.value):
        return Known(given, option)
    if override:
        return Known(given, f"{option} (--override: {stated.where} states {show(stated.value)})")
    raise SpecModelError(
        f"{option} {show(given)} contradicts {stated.where}, which states {label} {show(stated.value)}; "
        f"leave {option} out, or add --override to price {show(given)} instead"
    )


def value_text(value: Any) -> str:
    """A value as a message shows it: a short name or number as it is, anything else as an
    excerpt (:func:`specmodel.safe_input.excerpt`).

    >>> value_text("qwen3-8b"), value_text(4), value_text("a b")
    ('qwen3-8b', '4', "'a b'")
    """
    text = str(value)
    if isinstance(value, int | float | str) and 0 < len(text) <= 80 and all(c.isalnum() or c in "-_.+/:" for c in text):
        return text
    return excerpt(value)


def lengths_agree(given: float, stated: float) -> bool:
    """Whether a length given on the command line agrees with a stated mean: within
    :data:`LENGTH_AGREEMENT` of it.

    >>> lengths_agree(2048, 2000), lengths_agree(2048, 500)
    (True, False)
    """
    return abs(float(given) - float(stated)) <= LENGTH_AGREEMENT * max(float(stated), 1.0)


def running_distribution(samples: tuple[float, ...]) -> dict[str, float] | None:
    """The distribution of the busy samples (:func:`specmodel.vllm.deployment.running_summary`:
    count, min, median, mean, 90th percentile, max), None when no sample was busy.

    >>> running_distribution((0, 4, 8, 12))["median"], running_distribution((0, 0))
    (8.0, None)
    """
    busy = busy_samples(samples)
    if busy.size == 0:
        return None
    return dataclasses.asdict(running_summary(busy.tolist()))


def concurrency_in_range(given: int, samples: tuple[float, ...]) -> bool:
    """Whether ``--concurrency`` lies within what the server was seen running (busy samples).

    >>> concurrency_in_range(8, (0, 4, 12)), concurrency_in_range(64, (0, 4, 12))
    (True, False)
    """
    busy = busy_samples(samples)
    return bool(busy.size == 0 or busy.min() <= given <= busy.max())


def settle_concurrency(args: argparse.Namespace, stated: ServerDeployment) -> tuple[Known, dict[str, float] | None]:
    """The concurrency to price and the distribution the server ran: ``--concurrency`` where
    it lies within the server's busy samples (or ``--override``), else their median."""
    samples = tuple(stated.running.value) if stated.running is not None else ()
    distribution = running_distribution(samples)
    if distribution is None:
        if args.concurrency is None:
            raise SpecModelError(
                "the files state no running requests: give --concurrency N, the concurrent sequences the server runs"
            )
        return Known(args.concurrency, "--concurrency"), None
    assert stated.running is not None
    where = stated.running.where
    median = max(1, int(round(distribution["median"])))
    if args.concurrency is None:
        return Known(median, f"the median of {distribution['samples']} busy samples of {where}"), distribution
    if args.override or concurrency_in_range(args.concurrency, samples):
        return Known(args.concurrency, "--concurrency"), distribution
    raise SpecModelError(
        f"--concurrency {args.concurrency} contradicts {where}: the server ran {distribution['min']:g} to "
        f"{distribution['max']:g} requests (median {distribution['median']:g}); leave --concurrency out, or add "
        "--override to price it instead"
    )


def check_admitted(concurrency: Known, max_num_seqs: Stated | None, override: bool) -> None:
    """Refuse a concurrency above the server's ``max_num_seqs`` (it never runs more sequences
    in a batch), unless ``override``."""
    if max_num_seqs is None or override or concurrency.value <= int(max_num_seqs.value):
        return
    raise SpecModelError(
        f"concurrency {concurrency.value} ({concurrency.where}) is above the server's max_num_seqs "
        f"{max_num_seqs.value} ({max_num_seqs.where}): it never batches more; leave --concurrency out, or add "
        "--override to price it instead"
    )


def settle_length(
    label: str, option: str, given: int | None, stated: Stated | None, default: int, override: bool
) -> Known:
    """A workload length (prompt or generated tokens per request): as :func:`settle`, with a
    stated mean rounded to whole tokens and the model's ``default`` when neither states it,
    its source saying so."""
    if stated is not None:
        stated = Stated(max(1, int(round(float(stated.value)))), stated.where)
    known = settle(label, option, given, stated, override, lengths_agree)
    if known is not None:
        return known
    return Known(default, f"the model's default: the files state no {label}; give {option} to change it")


def stated_drafter(stated: ServerDeployment) -> Stated | None:
    """The drafter the server's files state (its speculative configuration), as a
    :class:`ServedDrafter` with where it was read; None when they state none."""
    from specmodel.vllm.speculative_config import served_drafter_from_config

    if stated.speculative_config is None:
        return None
    text = json.dumps(stated.speculative_config.value)
    try:
        served = served_drafter_from_config(text)
    except SpecModelError as exc:
        message = str(exc).replace(
            "--speculative-config", f"the speculative configuration of {stated.speculative_config.where}"
        )
        raise SpecModelError(message) from None
    return Stated(served, stated.speculative_config.where)


def drafter_option_name(args: argparse.Namespace) -> str:
    """``--speculative-config`` or ``--drafter``: the option that names the drafter."""
    return "--speculative-config" if args.speculative_config is not None else "--drafter"


def given_drafter(args: argparse.Namespace, target: str) -> ServedDrafter | None:
    """The drafter ``--speculative-config`` or ``--drafter`` gives (None: neither)."""
    from specmodel.vllm import speculative_config

    if args.speculative_config is not None:
        return speculative_config.served_drafter_from_config(args.speculative_config)
    if args.drafter is not None:
        return speculative_config.served_drafter(drafter_name(args.drafter), target)
    return None


def drafter_name(name: str) -> str:
    """``--drafter``'s value as a drafter: a drafter's name as it is, else a draft model read
    like ``--speculative-config``'s model (:func:`specmodel.vllm.speculative_config.draft_model_key`)."""
    from specmodel.model.drafters import all_drafter_names
    from specmodel.vllm.speculative_config import draft_model_key

    return name if name in all_drafter_names() else draft_model_key(name)[0]


def with_layout_options(args: argparse.Namespace, served: ServedDrafter) -> ServedDrafter:
    """``served`` with the layout options given on the command line (0 included, refused later
    as ``point`` refuses it) in place of the configuration's; a tree given here replaces the
    configuration's tree."""
    given = {
        name: getattr(args, name)
        for name in ("draft_tensor_parallel", "tree_topk", "verify_tokens")
        if getattr(args, name) is not None
    }
    if {"tree_topk", "verify_tokens"} & set(given):
        given.update(tree_draft_positions=None, tree_widths=None)
    return dataclasses.replace(served, **given)


def settle_drafter(args: argparse.Namespace, stated: ServerDeployment, target: str) -> Known:
    """The deployed drafter: ``--speculative-config``/``--drafter`` against the files'
    speculative configuration (the same drafter, and gamma where both give one), with the
    layout options applied; refused where neither states one."""
    from specmodel.model.drafters import check_declared_head, check_drafter

    known = settle(
        "the drafter", drafter_option_name(args), given_drafter(args, target), stated_drafter(stated), args.override,
        drafters_agree, drafter_text,
    )  # fmt: skip
    if known is None:
        raise SpecModelError(
            "the files state no speculative configuration: give --speculative-config JSON (as the server was "
            "started with) or --drafter NAME"
        )
    check_drafter(known.value.drafter, target)
    check_declared_head(known.value.drafter, target)
    return Known(with_layout_options(args, known.value), known.where)


def drafter_text(served: ServedDrafter) -> str:
    """``draft model Qwen/Qwen3-0.6B, gamma 4``: a drafter as messages name it (``ngram`` for
    one named by ``--drafter``)."""
    return served.description.removeprefix("drafter ") + ("" if served.gamma is None else f", gamma {served.gamma}")


def drafters_agree(given: ServedDrafter, stated: ServedDrafter) -> bool:
    """Whether the drafter given on the command line is the one the files state: the same
    drafter, and the same gamma where both give one."""
    gammas = given.gamma is None or stated.gamma is None or given.gamma == stated.gamma
    return given.drafter == stated.drafter and gammas


def default_tensor_parallel(stated: ServerDeployment) -> Known | None:
    """vLLM's default of one GPU where the log's engine arguments were read and do not set
    ``tensor_parallel_size`` (vLLM logs only the arguments that differ from their defaults);
    None where no engine arguments were read."""
    if stated.engine_args_where is None:
        return None
    return Known(1, f"vLLM's default: {stated.engine_args_where} does not set tensor_parallel_size")


# --- the deployment's identity: model, card, GPUs, formats, drafter -------------------------


def stated_model_key(name: str) -> tuple[str, str] | None:
    """The model key of a name a server states (its ``--model``, ``model_name`` label or a
    bench file's ``model_id``) and how it was found: a catalogue model by its own name; a model
    whose config.json is at that path or in the local Hugging Face cache; a catalogue model
    whose name the served name extends (``Qwen/Qwen3-32B-AWQ``: ``qwen3-32b``, whose format
    may differ); None when none is found."""
    from specmodel.model.config_json import catalogue_model, resolve_model

    exact = catalogue_model(name, exact=True)
    if exact is not None:
        return exact, ""
    try:
        return resolve_model(name), ""
    except SpecModelError:
        pass
    key = catalogue_model(name)
    if key is None:
        return None
    return key, f"; priced as {key}, whose name it extends: give --quantization if its weights are quantized"


def same_model(a: str, b: str) -> bool:
    """Whether two model keys price the same network: the same key, or records equal in every
    field the model reads (a config.json of a catalogue model, read under another key)."""
    from specmodel.model.specs import get_architecture

    ignored = {"key", "name", "source", "published_parameters", "published_active_parameters"}
    return a == b or as_mapping(get_architecture(a), ignored) == as_mapping(get_architecture(b), ignored)


def settle_target(args: argparse.Namespace, stated: ServerDeployment) -> Known:
    """The target model: ``--target`` (a catalogue name, a config.json, a model folder or a
    Hugging Face id in the local cache) checked against the model the files name; the named
    model when no option is given; refused when the files name none and no option is given, or
    name one the catalogue and the local cache do not know."""
    from specmodel.model.config_json import resolve_model

    given = resolve_model(args.target) if args.target is not None else None
    named = stated.model or stated.served_model_name
    if named is None:
        if given is None:
            raise SpecModelError(
                "the files do not name the model: give --target NAME or --target PATH/config.json (or the model's "
                "folder, or its Hugging Face id when it is in the local Hugging Face cache)"
            )
        return Known(given, "--target")
    found = stated_model_key(named.value)
    if found is None:
        if given is None:
            raise SpecModelError(
                f"{named.where} names the model {excerpt(named.value)}, which is not in the catalogue and whose "
                "config.json is not in the local Hugging Face cache: give --target PATH/config.json (or the model's "
                "folder)"
            )
        return Known(given, f"--target (the server names {excerpt(named.value)}, {named.where})")
    key, how = found
    where = f"{named.where}, naming {value_text(named.value)}{how}"
    known = settle("model", "--target", given, Stated(key, where), args.override, same_model)
    assert known is not None
    return known


def card_key(name: str) -> str | None:
    """The card key a file's card name stands for (a bench file's ``gpu`` metadata, such as
    ``H100-SXM-80GB``): the longest key whose letters and digits begin the name's, with a
    leading ``NVIDIA``/``AMD`` dropped; None when no key does.

    >>> card_key("H100-SXM-80GB"), card_key("nvidia a100-80gb"), card_key("TPU v5e")
    ('h100-sxm', 'a100-80gb', None)
    """
    from specmodel.model.specs import hardware_catalog

    def plain(text: str) -> str:
        return "".join(c for c in text.lower() if c.isalnum())

    wanted = plain(name).removeprefix("nvidia").removeprefix("amd")
    found = [key for key in hardware_catalog() if wanted.startswith(plain(key))]
    return max(found, key=len) if found else None


def settle_hardware(args: argparse.Namespace, stated: ServerDeployment) -> Known:
    """The card: ``--hardware`` or ``--hardware-file`` (not both), checked against a card the
    files name (a bench file's metadata, by :func:`card_key`); refused when neither names one,
    or the files name one the catalogue does not know and no option says which it is."""
    from specmodel.model.hardware_file import load_hardware_file
    from specmodel.model.specs import get_hardware, hardware_catalog

    if args.hardware is not None and args.hardware_file is not None:
        raise SpecModelError("--hardware and --hardware-file both name the card; give one")
    given = load_hardware_file(args.hardware_file) if args.hardware_file is not None else args.hardware
    option = "--hardware-file" if args.hardware_file is not None else "--hardware"
    if given is not None:
        get_hardware(given)
    named = stated.hardware
    key = card_key(str(named.value)) if named is not None else None
    if named is not None and key is None:
        if given is None:
            raise SpecModelError(
                f"{named.where} names the card {value_text(named.value)}, which the catalogue does not know: give "
                "--hardware NAME or --hardware-file CARD.toml"
            )
        return Known(given, f"{option} (the files name the card {value_text(named.value)}, {named.where})")
    card = None if named is None or key is None else Stated(key, f"{named.where}, naming {value_text(named.value)}")
    known = settle("the card", option, given, card, args.override)
    if known is None:
        raise SpecModelError(
            "the files do not state the card the server runs on: give --hardware NAME (one of "
            f"{', '.join(hardware_catalog())}) or --hardware-file CARD.toml"
        )
    return known


def settle_tensor_parallel(args: argparse.Namespace, stated: ServerDeployment) -> Known:
    """The GPUs the target is split over: ``--tensor-parallel`` against the files'
    ``tensor_parallel_size``, vLLM's default where the log's engine arguments leave it out;
    refused where nothing states it."""
    known = settle(
        "tensor_parallel_size", "--tensor-parallel", args.tensor_parallel, stated.tensor_parallel_size, args.override
    ) or default_tensor_parallel(stated)
    if known is None:
        raise SpecModelError(
            "the files do not state how many GPUs the model is split over: give --tensor-parallel N (vLLM's "
            "tensor_parallel_size)"
        )
    return known


def settle_formats(args: argparse.Namespace, stated: ServerDeployment) -> tuple[Known | None, Known | None]:
    """The weight quantization and the KV cache's dtype, as vLLM names them: the options
    against what the files state (a log's engine arguments, a scrape's ``cache_config_info``)."""
    from specmodel.model.quantization import kv_cache_format_of_dtype

    quantization = settle("quantization", "--quantization", args.quantization, stated.quantization, args.override)
    cache = settle(
        "kv_cache_dtype",
        "--kv-cache-dtype",
        args.kv_cache_dtype,
        stated.kv_cache_dtype,
        args.override,
        lambda a, b: kv_cache_format_of_dtype(a) == kv_cache_format_of_dtype(b),
    )
    return quantization, cache


def formatted_model(key: str, quantization: Known | None, cache: Known | None) -> str:
    """The key of model ``key`` stored as the settled formats (a quantized variant,
    :func:`specmodel.model.quantization.add_quantized`; the checkpoint's own
    ``quantization_config`` where no quantization is stated)."""
    from specmodel.model.quantization import add_quantized
    from specmodel.model.specs import get_architecture

    return add_quantized(
        get_architecture(key),
        None if quantization is None else quantization.value,
        None if cache is None else cache.value,
    )


def formatted_drafter(served: ServedDrafter, cache: Known | None) -> ServedDrafter:
    """A draft model's cache in the KV cache's dtype (vLLM's ``--kv-cache-dtype`` applies to
    the draft model's cache too); heads and lookups as they are."""
    from specmodel.model.drafters import DrafterKind, drafter_kind
    from specmodel.model.quantization import add_quantized
    from specmodel.model.specs import get_architecture

    if cache is None or drafter_kind(served.drafter) != DrafterKind.MODEL:
        return served
    return dataclasses.replace(served, drafter=add_quantized(get_architecture(served.drafter), None, cache.value))


# --- the load and the workload ----------------------------------------------------------------


def settle_workload(
    args: argparse.Namespace, stated: ServerDeployment, settings: Settings
) -> tuple[Known, Known, Settings, list[tuple[str, str]]]:
    """Prompt and generated tokens per request, and the settings with the server's
    generated tokens, memory share and token budget (each settled against the files), with
    the sources of the server settings that were stated. A prompt and its generated tokens
    longer than the server's ``max_model_len`` are refused."""
    context = settle_length(
        "mean prompt tokens", "--context", args.context, stated.mean_prompt_tokens, DEFAULTS["context"], args.override
    )
    generated = settle_length(
        "mean generated tokens", "--generated-tokens", args.generated_tokens, stated.mean_generated_tokens,
        settings.constants.GENERATED_TOKENS, args.override,
    )  # fmt: skip
    length = settle("max_model_len", "--max-model-len", args.max_model_len, stated.max_model_len, args.override)
    if length is not None and context.value + generated.value > length.value:
        raise SpecModelError(
            f"{context.value} prompt tokens ({context.where}) and {generated.value} generated ({generated.where}) "
            f"exceed max_model_len {length.value} ({length.where}): no request of that length is served"
        )
    share = settle(
        "gpu_memory_utilization", "--gpu-memory-utilization", args.gpu_memory_utilization,
        stated.gpu_memory_utilization, args.override,
    )  # fmt: skip
    constants: dict[str, Any] = {"GENERATED_TOKENS": int(generated.value)}
    if share is not None:
        constants["GPU_MEMORY_UTILIZATION"] = float(share.value)
    settings = settings.with_constants(**constants)
    budget = settle(
        "max_num_batched_tokens", "--max-num-batched-tokens", args.max_num_batched_tokens,
        stated.max_num_batched_tokens, args.override,
    )  # fmt: skip
    if budget is not None:
        engines = {k: replace(p, token_budget=int(budget.value)) for k, p in settings.engines.items()}
        settings = replace(settings, engines=engines)
    server = (("max_model_len", length), ("gpu_memory_utilization", share), ("max_num_batched_tokens", budget))
    return context, generated, settings, [(name, f"{k.value} ({k.where})") for name, k in server if k is not None]


def resolve(args: argparse.Namespace, settings: Settings, stated: ServerDeployment) -> AdvisedDeployment:
    """The deployment to advise on, every field settled by :func:`settle` from the options
    and what the server's files state (``stated``)."""
    target = settle_target(args, stated)
    hardware = settle_hardware(args, stated)
    gpus = settle_tensor_parallel(args, stated)
    quantization, cache = settle_formats(args, stated)
    key = formatted_model(target.value, quantization, cache)
    served = settle_drafter(args, stated, key)
    concurrency, running = settle_concurrency(args, stated)
    check_admitted(concurrency, stated.max_num_seqs, args.override)
    context, generated, settings, server = settle_workload(args, stated, settings)
    provenance = [
        ("model", f"{key} ({target.where})"),
        ("hardware", f"{hardware.value} ({hardware.where})"),
        ("tensor_parallel", f"{gpus.value} ({gpus.where})"),
        ("drafter", f"{drafter_text(served.value)} ({served.where})"),
        ("concurrency", f"{concurrency.value} ({concurrency.where})"),
        ("context", f"{context.value} ({context.where})"),
        ("generated_tokens", f"{generated.value} ({generated.where})"),
    ]
    provenance += server
    if stated.engine_version is not None:
        provenance.append(("engine_version", f"{stated.engine_version.value} ({stated.engine_version.where})"))
    formats = (("quantization", quantization), ("kv_cache_dtype", cache))
    provenance += [(name, f"{k.value} ({k.where})") for name, k in formats if k is not None]
    return AdvisedDeployment(
        target=key, hardware=str(hardware.value), tensor_parallel=int(gpus.value),
        served=formatted_drafter(served.value, cache), concurrency=int(concurrency.value),
        context=int(context.value), settings=settings, observed=running is not None, running=running,
        provenance=tuple(provenance),
        engine_version=None if stated.engine_version is None else str(stated.engine_version.value),
    )  # fmt: skip


def bench_deployment(args: argparse.Namespace) -> ServedDrafter:
    """For ``advise --bench``: the card, the GPUs and the target settled against the files'
    metadata and model ids (written into ``args`` for :mod:`specmodel.cli.bench_advice`, which
    pairs the runs), and the deployed drafter."""
    from specmodel.vllm.deployment import load_bench_deployment, merged_all

    stated = merged_all([load_bench_deployment(path, "--bench") for path in args.bench])
    args.hardware, args.hardware_file = settle_hardware(args, stated).value, None
    args.tensor_parallel = settle_tensor_parallel(args, stated).value
    if args.target is not None or stated.model is not None or stated.served_model_name is not None:
        args.target = settle_target(args, stated).value
    target = args.target or ""
    known = settle(
        "the drafter", drafter_option_name(args), given_drafter(args, target) if target else _bench_drafter(args),
        stated_drafter(stated), args.override, drafters_agree, drafter_text,
    )  # fmt: skip
    if known is None:
        raise SpecModelError(
            "the files state no speculative configuration: give --speculative-config JSON or --drafter NAME"
        )
    return with_layout_options(args, known.value)


def _bench_drafter(args: argparse.Namespace) -> ServedDrafter | None:
    """The drafter option of ``--bench`` runs whose target is not yet known (the pairing
    checks it against the runs' model)."""
    from specmodel.vllm import speculative_config

    if args.speculative_config is not None:
        return speculative_config.served_drafter_from_config(args.speculative_config)
    if args.drafter is not None:
        return speculative_config.served_drafter(drafter_name(args.drafter))
    return None


def check_given_options(args: argparse.Namespace) -> None:
    """Refuse a bad option before any file is read: ``--speculative-config`` parsed, the
    formats named as vLLM names them, a card file read, a model name or config resolved."""
    from specmodel.model.config_json import resolve_model
    from specmodel.model.hardware_file import load_hardware_file
    from specmodel.model.quantization import kv_cache_format_of_dtype, weight_format_of_method
    from specmodel.vllm.speculative_config import served_drafter_from_config

    check_counts(args)
    if args.speculative_config is not None:
        served_drafter_from_config(args.speculative_config)
    if args.quantization is not None and args.quantization != "compressed-tensors":
        weight_format_of_method(args.quantization)
    if args.kv_cache_dtype is not None:
        kv_cache_format_of_dtype(args.kv_cache_dtype)
    if args.hardware is not None and args.hardware_file is not None:
        raise SpecModelError("--hardware and --hardware-file both name the card; give one")
    if args.hardware_file is not None:
        args.hardware, args.hardware_file = load_hardware_file(args.hardware_file), None
    elif args.hardware is not None:
        from specmodel.model.specs import get_hardware

        get_hardware(args.hardware)
    if args.target is not None:
        args.target = resolve_model(args.target)


#: ``advise``'s counting options and the least each may be (a share is checked on its own).
_AT_LEAST_ONE = ("concurrency", "context", "generated_tokens", "max_model_len", "max_num_batched_tokens")


def check_counts(args: argparse.Namespace) -> None:
    """Refuse, before any file is read, a count below 1 (``--concurrency 0``), a memory share
    outside (0, 1] and a scrape window outside 0 to 600 seconds."""
    for name in _AT_LEAST_ONE:
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise SpecModelError(f"--{name.replace('_', '-')} {value} is not allowed; it must be at least 1")
    share = getattr(args, "gpu_memory_utilization", None)
    if share is not None and not 0 < share <= 1:
        raise SpecModelError(f"--gpu-memory-utilization {share:g} is not allowed; it is a share of memory, in (0, 1]")
    window = getattr(args, "window", None)
    if window is not None and not 0 <= window <= 600:
        raise SpecModelError(f"--window {window:g} is not allowed; give 0 to 600 seconds")
