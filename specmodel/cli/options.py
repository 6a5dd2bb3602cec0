"""The command line's options: one definition each, shared by the commands that take them."""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.model import constants as declared
from specmodel.model.drafters import all_drafter_names
from specmodel.model.engines import BATCHINGS
from specmodel.model.scenario import DEFAULTS, PROFILES, Scenario
from specmodel.model.settings import Settings
from specmodel.model.specs import architecture_catalog, hardware_catalog
from specmodel.model.validation import MAX_GAMMA
from specmodel.safe_input import excerpt
from specmodel.structured_input import MAX_DIGITS

#: Most items of a list of per-position rates read (a longer one is refused before it is parsed).
MAX_RATES = MAX_GAMMA

#: Options named as we name them and as vLLM's engine arguments do (aliases: one option, either name).
TENSOR_PARALLEL = ("--tensor-parallel", "--tensor-parallel-size")
GAMMA = ("--gamma", "--num-speculative-tokens")

#: Scenario fields the options set, read off the one schema (:class:`Scenario`): each field the
#: parser has an option for; None means "not given" (the model's default applies).
SCENARIO_OPTIONS = tuple(f.name for f in dataclasses.fields(Scenario))


class UsageError(SystemExit):
    """A usage error, exit status 2: its one-line ``message`` is printed by :func:`specmodel.cli.main`
    (as text, or as a JSON object under ``--json``)."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (:class:`UsageError`, exit status 2), an option is
    never taken from a prefix of its name (``--conc`` is no ``--concurrency``), every ``type=int``
    or ``type=float`` option is read by :func:`whole_number` or :func:`decimal_number` (ASCII
    digits only, bounded, finite) and an option given twice, under either of its names, is
    refused (:class:`_StoreOnce`) rather than the last one kept silently."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("type", int, whole_number)
        self.register("type", float, decimal_number)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str) -> Any:  # noqa: D401 - argparse API
        raise UsageError(excerpt_line(message))


def excerpt_line(message: str, limit: int = 300) -> str:
    """``message`` on one line and at most ``limit`` characters (argparse echoes what it was given).

    >>> excerpt_line("bad  value " + "x" * 400, 20)
    'bad value xxxxxxx...'
    """
    line = " ".join(message.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


class _StoreOnce(argparse._StoreAction):
    """argparse's ``store``, refusing a second value for the same option (``--concurrency 4
    --concurrency 8``): which one was meant is a guess."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        given = namespace.__dict__.setdefault("_given_options", set())
        if self.dest in given and self.option_strings:
            parser.error(f"argument {'/'.join(self.option_strings)}: given twice; give it once")
        given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


#: A whole number or a decimal number as the command line takes them: ASCII only (Python's
#: int() and float() also take "３", "1_0" and "nan").
_WHOLE = re.compile(rf"[+-]?[0-9]{{1,{MAX_DIGITS}}}", re.ASCII)
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?", re.ASCII)


def whole_number(text: str) -> int:
    """An integer option's value: ASCII digits (at most MAX_DIGITS), an optional sign, spaces
    around allowed; anything else is a one-line usage error that quotes an excerpt.

    >>> whole_number(" 12 "), whole_number("-3")
    (12, -3)
    """
    if not _WHOLE.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(
            f"{excerpt(text)} is not a whole number (ASCII digits 0-9, at most {MAX_DIGITS} of them)"
        )
    return int(text)


def decimal_number(text: str) -> float:
    """A real option's value: a finite decimal number in ASCII (``0.75``, ``1e-3``); NaN,
    infinity, unicode digits and a number too large for a float are one-line usage errors.

    >>> decimal_number("0.75"), decimal_number(" 1e-3")
    (0.75, 0.001)
    """
    value = float(text) if _DECIMAL.fullmatch(text.strip()) else math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{excerpt(text)} is not a finite decimal number such as 0.75")
    return value


#: Longest name an option takes (a drafter, accelerator, model or engine; a served model's
#: name may be a path): longer is no name of the catalogue, and is refused before it is echoed.
MAX_NAME = 200


def name_text(text: str) -> str:
    """A name option's value (``--drafter``, ``--target``, ``--hardware``, ``--engine``,
    ``--model-name``): at most :data:`MAX_NAME` characters, none of them a control character;
    the catalogue then says whether it knows it.

    >>> name_text("qwen3-8b")
    'qwen3-8b'
    """
    if not text or len(text) > MAX_NAME or not text.isprintable():
        raise argparse.ArgumentTypeError(
            f"{excerpt(text)} is not a name: 1 to {MAX_NAME} printable characters ({len(text):,} given)"
        )
    return text


def rates(text: str) -> tuple[float, ...]:
    """``--per-position 0.75,0.48,0.26``: a comma-separated list of rates, none left empty
    (``0.8,,0.3`` would silently move 0.3 to position 2).

    >>> rates("0.75, 0.48,0.26")
    (0.75, 0.48, 0.26)
    """
    items = text.split(",")
    if len(items) > MAX_RATES:
        raise argparse.ArgumentTypeError(f"{len(items):,} rates given; at most {MAX_RATES} positions are modelled")
    out = []
    for position, item in enumerate(items, 1):
        if not item.strip():
            raise argparse.ArgumentTypeError(f"position {position} of {excerpt(text)} is empty; give a rate for each")
        try:
            out.append(decimal_number(item))
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"position {position}: {excerpt(item)} is not a rate such as 0.75"
            ) from None
    return tuple(out)


def acceptance_options(parser: Any) -> None:
    """The acceptance, given one way: a profile and alpha, per position, or its mean length."""
    parser.add_argument(
        "--acceptance",
        choices=PROFILES,
        default=None,
        help=f"acceptance across draft positions (default: {DEFAULTS['acceptance']})",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=None,
        help=f"acceptance of the first guess, strictly between 0 and 1 (default: {DEFAULTS['alpha']})",
    )
    parser.add_argument(
        "--per-position",
        type=rates,
        metavar="U1,U2,...",
        default=None,
        help="measured unconditional acceptance of each draft position, as vLLM's counters give it "
        "(accepted at position j / drafts); gamma is its length unless --gamma says fewer",
    )
    parser.add_argument("--mean-acceptance-length", type=float, metavar="M", default=None,
                        help="measured mean acceptance length (tokens per verify pass, 1 < M < gamma + 1), of a "
                             "chain or a tree: the model's tokens per iteration are M (the 'same' profile's alpha that "
                             "gives M, said), with no tree reshaping")  # fmt: skip


def runs_acceptance_option(parser: Any, scope: str = "") -> None:
    """``--mean-acceptance-length M`` for benchmark runs whose file does not report one (vLLM's
    bench serve before its ``spec_decode_*`` fields); ``scope`` prefixes the help."""
    parser.add_argument("--mean-acceptance-length", type=float, metavar="M", default=None,
                        help=f"{scope}mean acceptance length of speculative runs whose file does not report "
                             "one (vLLM before its spec_decode_* fields): the server log's 'Mean acceptance "
                             "length'")  # fmt: skip


def engine_options(parser: Any, settings: Settings) -> None:
    parser.add_argument(
        "--engine",
        type=name_text,
        metavar="NAME",
        default=None,
        help=f"serving engine profile, one of {', '.join(settings.engines)} (default: "
        f"{DEFAULTS['engine']}, the article's roofline)",
    )
    parser.add_argument(
        "--batching",
        choices=BATCHINGS,
        default=None,
        help="cohort: B sequences start together and drain (the article); steady: B sequences "
        "always running, as serving benchmarks measure (default: the engine's)",
    )
    parser.add_argument(
        "--generated-tokens",
        type=int,
        metavar="G",
        default=None,
        help=f"tokens each sequence generates (default: {settings.constants.GENERATED_TOKENS})",
    )
    engine_profile_option(parser)


def engine_profile_option(parser: Any) -> None:
    """``--engine-profile PROFILE.toml``: an engine profile of one's own (``fit-engine`` writes
    one); and the server's token budget (:func:`token_budget_option`)."""
    parser.add_argument(
        "--engine-profile",
        type=Path,
        metavar="PROFILE.toml",
        default=None,
        help="engine profile file (one [KEY] table, as specmodel fit-engine writes): added to the engines "
        "and made the engine; its KEY may not be a built-in engine's (ideal, vllm: those are never replaced); "
        "--engine may repeat its key, and naming another engine is an error",
    )
    token_budget_option(parser)


def token_budget_option(parser: Any) -> None:
    """``--max-num-batched-tokens N``: the server's token budget per pass, for every engine."""
    parser.add_argument(
        "--max-num-batched-tokens",
        type=whole_number,
        metavar="N",
        default=None,
        help="the server's --max-num-batched-tokens, the tokens one pass may schedule: it sets how the prompts "
        "of new requests land on the decode passes of a steady batch (default: the engine profile's "
        "token_budget; the vllm profile's is vLLM's default on a GPU of 70 GiB or more)",
    )


def with_token_budget(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings with every engine's ``token_budget`` set to ``--max-num-batched-tokens``;
    unchanged when the option was not given."""
    budget = getattr(args, "max_num_batched_tokens", None)
    if budget is None:
        return settings
    if budget < 1:
        raise SpecModelError(f"--max-num-batched-tokens must be at least 1 token per pass, not {budget}")
    engines = {k: replace(p, token_budget=budget) for k, p in settings.engines.items()}
    return replace(settings, engines=engines)


def with_engine_profile(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings with ``--engine-profile``'s profile added as an engine of its key, and
    ``args.engine`` set to that key; unchanged when the option was not given. An ``--engine``
    naming another engine contradicts the file, and is refused rather than one silently
    winning. ``--max-num-batched-tokens`` then sets every engine's token budget, the file's
    included."""
    path = getattr(args, "engine_profile", None)
    if path is None:
        return with_token_budget(args, settings)
    from specmodel.model.profile_file import load_profile

    profile = load_profile(path, "--engine-profile")
    if args.engine is not None and args.engine != profile.key:
        raise SpecModelError(
            f"--engine {excerpt(args.engine)} contradicts --engine-profile {excerpt(str(path))}, whose engine is "
            f"{profile.key!r}; give --engine {profile.key} or leave --engine out"
        )
    args.engine = profile.key
    return with_token_budget(args, settings.with_engine(profile))


def parallel_options(parser: Any, grid: bool = False) -> None:
    """GPUs (tensor parallelism) and the shape of a tree of guesses, as vLLM and SGLang name them."""
    parser.add_argument(
        *TENSOR_PARALLEL,
        type=int,
        metavar="N",
        default=None,
        help="GPUs the target is split over, vLLM's tensor_parallel_size (default: "
        + ("every one of 1, 2, 4, 8 that the card and model allow" if grid else "1")
        + ")",
    )
    parser.add_argument(
        "--draft-tensor-parallel",
        "--draft-tensor-parallel-size",
        type=int,
        metavar="N",
        default=None,
        help="GPUs the drafter runs on: 1, or the target's (the default), vLLM's draft_tensor_parallel_size",
    )
    parser.add_argument(
        "--tree-topk",
        type=int,
        metavar="K",
        default=None,
        help="candidates per draft step, a tree of guesses (SGLang's speculative_eagle_topk: the K branches "
        "each draft pass runs; default: 1, a chain)",
    )
    parser.add_argument(
        "--verify-tokens",
        type=int,
        metavar="V",
        default=None,
        help="positions one verify pass scores, the root and the best V - 1 candidates (SGLang's "
        "speculative_num_draft_tokens; at most tree_topk + (gamma - 1) tree_topk^2 + 1, SGLang's candidate pool; "
        "gamma + 1 for a chain; default: tree_topk x gamma + 1)",
    )


def scenario_options(parser: argparse.ArgumentParser, settings: Settings) -> None:
    parser.add_argument(
        "--concurrency", type=int, default=DEFAULTS["concurrency"], help="concurrent sequences B (default: %(default)s)"
    )
    parser.add_argument(
        "--context", type=int, default=DEFAULTS["context"], help="prompt tokens per sequence (default: %(default)s)"
    )
    parser.add_argument(
        *GAMMA,
        type=int,
        default=None,
        help="draft tokens per iteration, vLLM's num_speculative_tokens; a tree's depth, SGLang's "
        f"speculative_num_steps (default: {DEFAULTS['gamma']})",
    )
    drafter_option(parser, default=settings.deployment.draft)
    acceptance_options(parser)
    engine_options(parser, settings)
    deployment_options(parser, settings)
    format_options(parser)
    parallel_options(parser)


def drafter_option(parser: Any, default: str | None = None) -> None:
    parser.add_argument("--drafter", type=name_text, metavar="NAME", default=default,
                        help="where drafts come from, as vLLM names its methods: ngram, eagle, eagle3, mtp, or a "
                             "smaller model sharing the target's vocabulary; one of " + ", ".join(all_drafter_names())
                             + (" (default: %(default)s)" if default else ""))  # fmt: skip


def deployment_options(parser: argparse.ArgumentParser, settings: Settings, served: bool = False) -> None:
    """``--hardware`` and ``--target``; names are checked by the model, which lists the known ones.
    ``served``: the command reads a server's files, which name its model (``--model-name``,
    :func:`served_model_option`); the two then have no default: what the files do not state
    must be given."""
    after = " (default: what the server's files state)" if served else " (default: %(default)s)"
    parser.add_argument(
        "--hardware",
        type=name_text,
        metavar="NAME",
        default=None if served else settings.deployment.hardware,
        help="accelerator, one of " + ", ".join(hardware_catalog()) + after,
    )
    parser.add_argument(
        "--target",
        type=name_text,
        metavar="NAME|CONFIG",
        default=None if served else settings.deployment.target,
        help="target model, one of " + ", ".join(architecture_catalog()) + ", or any model by its config.json (a "
        "file, the model's folder, or a Hugging Face id in the local Hugging Face cache)" + after,
    )
    if served:
        served_model_option(parser)


def served_model_option(parser: Any) -> None:
    """``--model-name``: which model of a scrape holding several (its ``model_name`` label)."""
    parser.add_argument(
        "--model-name",
        "--served-model-name",
        type=name_text,
        metavar="NAME",
        default=None,
        help="the model_name label of the model to advise on, when the scrape holds counters of several "
        "models (the scrape's model is compared with --target)",
    )


def scenario_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The scenario fields the options gave (those left out take the model's defaults)."""
    return {k: getattr(args, k) for k in SCENARIO_OPTIONS if getattr(args, k, None) is not None}


def format_options(parser: Any) -> None:
    """The formats the server stores weights and cache in, and a card of the user's own, as
    vLLM and a card file name them (:mod:`specmodel.model.quantization`,
    :mod:`specmodel.model.hardware_file`)."""
    parser.add_argument(
        "--quantization",
        type=name_text,
        metavar="METHOD",
        default=None,
        help="the target's weight quantization as vLLM names it (--quantization): fp8, int8 (w8a8), awq, gptq, "
        "... (default: the checkpoint's dtype, or what its config.json or the server's files state)",
    )
    parser.add_argument(
        "--kv-cache-dtype",
        type=name_text,
        metavar="DTYPE",
        default=None,
        help="the KV cache's element type as vLLM names it (--kv-cache-dtype): auto, fp8, fp8_e4m3, fp8_e5m2 "
        "(default: auto, the model's dtype)",
    )
    parser.add_argument(
        "--hardware-file",
        type=Path,
        metavar="CARD.toml",
        default=None,
        help="a card of your own: one [KEY] table with the fields of specmodel/data/hardware.toml, each with its "
        "source; it becomes the --hardware",
    )


def server_options(parser: Any) -> None:
    """What ``advise`` may be told about a server beyond what its files state (each option
    must agree with the files, unless ``--override``)."""
    parser.add_argument(
        "--window",
        type=float,
        metavar="SECONDS",
        default=None,
        help="seconds between the two scrapes of --url (default: 10; 1 to 600)",
    )
    parser.add_argument(
        "--override",
        action="store_true",
        help="let options given here replace what the server's files state (without it, an option that "
        "contradicts a file is refused, naming both)",
    )
    parser.add_argument(
        "--generated-tokens",
        type=int,
        metavar="G",
        default=None,
        help="generated tokens per request (default: what the files state, else the model's "
        f"{declared.GENERATED_TOKENS})",
    )
    parser.add_argument(
        "--max-model-len",
        type=int,
        metavar="N",
        default=None,
        help="the server's max_model_len: a prompt plus its generated tokens must fit in it",
    )
    parser.add_argument(
        "--gpu-memory-utilization",
        type=float,
        metavar="F",
        default=None,
        help="the server's gpu_memory_utilization, the share of each GPU's memory it may use (default: what the "
        f"files state, else {declared.GPU_MEMORY_UTILIZATION})",
    )


def resolve_model_options(args: argparse.Namespace) -> None:
    """``point``'s model and card options made catalogue keys, in place: ``--hardware-file``
    registered as the ``--hardware``; ``--target`` a catalogue name or a config.json (file,
    folder, or Hugging Face id in the local cache) registered; the target stored as
    ``--quantization`` (else its checkpoint's ``quantization_config``) with its cache, and a
    draft model's cache, as ``--kv-cache-dtype`` (:func:`specmodel.model.quantization.add_quantized`)."""
    from specmodel.model.drafters import DrafterKind, drafter_kind
    from specmodel.model.quantization import add_quantized
    from specmodel.model.specs import architecture_catalog, get_architecture

    if getattr(args, "hardware_file", None) is not None:
        from specmodel.model.hardware_file import load_hardware_file

        if "hardware" in getattr(args, "_given_options", set()):
            raise SpecModelError("--hardware and --hardware-file both name the card; give one")
        args.hardware = load_hardware_file(args.hardware_file)
    if args.target not in architecture_catalog():  # a name or file only config_json reads
        from specmodel.model.config_json import resolve_model

        args.target = resolve_model(args.target)
    cache = getattr(args, "kv_cache_dtype", None)
    args.target = add_quantized(get_architecture(args.target), getattr(args, "quantization", None), cache)
    drafter = getattr(args, "drafter", None)
    if drafter is not None and drafter not in all_drafter_names():
        from specmodel.vllm.speculative_config import draft_model_key

        args.drafter = drafter = draft_model_key(drafter)[0]
    if cache is not None and drafter is not None and drafter_kind(drafter) == DrafterKind.MODEL:
        args.drafter = add_quantized(get_architecture(drafter), None, cache)


def concurrency_text(text: str) -> int | str:
    """``advise --concurrency``'s value as argparse stores it: a plain whole number as an int
    (the concurrency the verdict is priced at), anything else as given, for
    :func:`specmodel.vllm.load.parse_weighted_concurrency` to read or refuse in one line.

    >>> concurrency_text("32"), concurrency_text("8:0.5,32:0.5")
    (32, '8:0.5,32:0.5')
    """
    try:
        return int(text)
    except ValueError:
        return text.strip()
