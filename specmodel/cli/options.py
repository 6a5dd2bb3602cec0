"""The command line's options: one definition each, shared by the commands that take them."""

from __future__ import annotations

import argparse
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.model.drafters import all_drafter_names
from specmodel.model.engines import BATCHINGS
from specmodel.model.scenario import DEFAULTS, PROFILES
from specmodel.model.settings import Settings
from specmodel.model.specs import architecture_catalog, hardware_catalog
from specmodel.safe_input import excerpt

#: Scenario fields the options set; None means "not given" (the model's default applies).
SCENARIO_OPTIONS = (
    "concurrency",
    "context",
    "gamma",
    "drafter",
    "acceptance",
    "alpha",
    "per_position",
    "mean_acceptance_length",
    "engine",
    "batching",
    "generated_tokens",
    "hardware",
    "target",
    "tensor_parallel",
    "draft_tensor_parallel",
    "tree_topk",
    "verify_tokens",
)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> Any:  # noqa: D401 - argparse API
        self.exit(2, f"specmodel: error: {message}\n")


def rates(text: str) -> tuple[float, ...]:
    """``--per-position 0.75,0.48,0.26``: a comma-separated list of rates."""
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{excerpt(text)} is not a comma-separated list of numbers") from None


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
                        help="measured mean acceptance length (tokens per verify pass, 1 < M < gamma + 1); the model "
                             "uses the 'same' profile's alpha that gives M and says which")  # fmt: skip


def engine_options(parser: Any, settings: Settings) -> None:
    parser.add_argument(
        "--engine",
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


def parallel_options(parser: Any, grid: bool = False) -> None:
    """GPUs (tensor parallelism) and the shape of a tree of guesses, as vLLM and SGLang name them."""
    parser.add_argument(
        "--tensor-parallel",
        type=int,
        metavar="N",
        default=None,
        help="GPUs the target is split over, vLLM's tensor_parallel_size (default: "
        + ("every one of 1, 2, 4, 8 that the card and model allow" if grid else "1")
        + ")",
    )
    parser.add_argument(
        "--draft-tensor-parallel",
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
        help="candidates per draft step, a tree of guesses (SGLang's speculative_eagle_topk; default: 1, a chain)",
    )
    parser.add_argument(
        "--verify-tokens",
        type=int,
        metavar="V",
        default=None,
        help="positions one verify pass scores (SGLang's speculative_num_draft_tokens; default: "
        "tree_topk x gamma + 1, all of the tree)",
    )


def scenario_options(parser: argparse.ArgumentParser, settings: Settings) -> None:
    parser.add_argument(
        "--concurrency", type=int, default=DEFAULTS["concurrency"], help="concurrent sequences B (default: %(default)s)"
    )
    parser.add_argument(
        "--context", type=int, default=DEFAULTS["context"], help="prompt tokens per sequence (default: %(default)s)"
    )
    parser.add_argument(
        "--gamma",
        type=int,
        default=None,
        help=f"draft tokens per iteration, num_speculative_tokens (default: {DEFAULTS['gamma']})",
    )
    drafter_option(parser, default=settings.deployment.draft)
    acceptance_options(parser)
    engine_options(parser, settings)
    deployment_options(parser, settings)
    parallel_options(parser)


def drafter_option(parser: Any, default: str | None = None) -> None:
    parser.add_argument("--drafter", metavar="NAME", default=default,
                        help="where drafts come from, as vLLM names its methods: ngram, eagle, eagle3, mtp, or a "
                             "smaller model sharing the target's vocabulary; one of " + ", ".join(all_drafter_names())
                             + (" (default: %(default)s)" if default else ""))  # fmt: skip


def deployment_options(parser: argparse.ArgumentParser, settings: Settings) -> None:
    """``--hardware`` and ``--target``; names are checked by the model, which lists the known ones."""
    parser.add_argument(
        "--hardware",
        metavar="NAME",
        default=settings.deployment.hardware,
        help="accelerator, one of " + ", ".join(hardware_catalog()) + " (default: %(default)s)",
    )
    parser.add_argument(
        "--target",
        metavar="NAME",
        default=settings.deployment.target,
        help="target model, one of " + ", ".join(architecture_catalog()) + " (default: %(default)s)",
    )


def scenario_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The scenario fields the options gave (those left out take the model's defaults)."""
    fields = {k: getattr(args, k) for k in SCENARIO_OPTIONS if getattr(args, k, None) is not None}
    if args.per_position is not None and not args.per_position:
        raise SpecModelError("--per-position needs at least one rate")
    return fields
