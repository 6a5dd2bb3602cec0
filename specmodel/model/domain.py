"""Where an engine profile's data ends: the targets, cards, drafters, GPUs and batches the runs
it was fitted on cover (:class:`specmodel.model.engines.ProfileDomain`), and one plain
sentence per way a scenario lies outside them (:func:`outside_domain`).

A fitted constant is a measurement of one engine on one deployment: a fixed time per pass
fitted on Llama-3.1-8B on an H100 holds launches, scheduling and kernels of that model on that
card, and an overlap exponent fitted on batches 1 to 128 says nothing of batch 512. Applied
elsewhere the profile extrapolates; these notes say so, and never refuse. A target or card
the catalogue does not know (read from a user's own file) is outside unless the domain lists
it by that name. Names compare without regard to case (Hugging Face ids vary in case).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.model.drafters import DrafterKind, drafter_kind
from specmodel.model.engines import EngineProfile, ProfileDomain

#: How each kind of drafter is named in a note.
KIND_WORDS = {
    DrafterKind.MODEL: "a draft model",
    DrafterKind.HEAD: "a draft head",
    DrafterKind.FUSED_HEAD: "a head fusing several target layers",
    DrafterKind.NGRAM: "an n-gram lookup",
}
#: The lead of the line ``point`` prints after its table when a note applies.
OUTSIDE_LEAD = "Outside the profile's data: "


def profile_domain(
    *,
    targets: Iterable[str],
    hardware: Iterable[str],
    drafters: Iterable[str],
    tensor_parallel: Iterable[int],
    concurrency: Iterable[int],
    engine_versions: Iterable[str],
) -> ProfileDomain:
    """The domain of a fit's runs, each list without repeats and sorted, the drafters' kinds
    from the catalogue (a name it does not know adds no kind), the batch range the smallest
    and largest concurrency.

    >>> d = profile_domain(targets=["llama-3.1-8b"], hardware=["h100-sxm"], drafters=["eagle3", "ngram", "eagle"],
    ...                    tensor_parallel=[1], concurrency=[16, 1, 128], engine_versions=["vLLM v0.10.1"])
    >>> d.drafters, d.drafter_kinds, d.concurrency
    (('eagle', 'eagle3', 'ngram'), ('head', 'fused_head', 'ngram'), (1, 128))
    """
    names = sorted(set(drafters))
    kinds = {kind_of(n) for n in names}
    batches = sorted(set(concurrency))
    return ProfileDomain(
        targets=tuple(sorted(set(targets))),
        hardware=tuple(sorted(set(hardware))),
        drafters=tuple(names),
        drafter_kinds=tuple(str(k) for k in DrafterKind if k in kinds),
        tensor_parallel=tuple(sorted(set(tensor_parallel))),
        concurrency=(batches[0], batches[-1]),
        engine_versions=tuple(sorted(set(engine_versions))),
    )


def kind_of(drafter: str) -> DrafterKind | None:
    """The catalogue's kind of drafter ``drafter``; None for a name it does not know."""
    try:
        return drafter_kind(drafter)
    except SpecModelError:
        return None


def outside_domain(
    profile: EngineProfile,
    *,
    target: str,
    hardware: str,
    drafter: str | None,
    concurrency: int,
    tensor_parallel: int = 1,
    engine_version: str | None = None,
) -> tuple[str, ...]:
    """One sentence per way the scenario (catalogue keys or a user's names, a batch of
    ``concurrency`` sequences on ``tensor_parallel`` GPUs; ``drafter`` None: plain decoding;
    ``engine_version`` the server's, where its files state it) lies outside the data
    ``profile`` was fitted on; nothing when inside. A profile that
    adds nothing to the roofline (the ``ideal`` engine) holds wherever the roofline does; one
    that records no domain says so in one note.

    >>> from specmodel.model.engines import engine_catalog
    >>> outside_domain(engine_catalog()["ideal"], target="qwen3-32b", hardware="b200", drafter="mtp", concurrency=512)
    ()
    """
    domain = profile.domain
    if domain is None:
        return () if adds_nothing(profile) else (unknown_domain_note(profile.key),)
    notes = (
        target_note(domain, profile.key, target),
        hardware_note(domain, profile.key, hardware),
        drafter_note(domain, profile.key, drafter),
        tensor_parallel_note(domain, profile.key, tensor_parallel),
        concurrency_note(domain, profile.key, concurrency),
        version_note(domain, profile.key, engine_version),
    )
    return tuple(n for n in notes if n)


def adds_nothing(profile: EngineProfile) -> bool:
    """Whether ``profile`` is the roofline alone: every fixed time 0 and the overlap exponent
    infinite (``max(t_mem, t_flop)``), so no constant of it was measured on anything."""
    times = (profile.target_pass_s, profile.sequence_pass_s, profile.draft_model_pass, profile.head_pass_s,
             profile.fused_head_pass, profile.ngram_lookup_s, profile.iteration_s)  # fmt: skip
    return math.isinf(profile.overlap) and not any(times)


def unknown_domain_note(key: str) -> str:
    """The note on a fitted profile that records no domain (written before profiles kept one)."""
    return (
        f"the {key} profile records no domain (the cards, models, drafters and batches it was fitted on): "
        "whether this scenario lies inside its data is unknown"
    )


def listed(values: Iterable[object]) -> str:
    """``a``, ``a and b``, ``a, b and c``.

    >>> listed(["h100-sxm"]), listed(["h100-sxm", "h200"]), listed([1, 2, 4])
    ('h100-sxm', 'h100-sxm and h200', '1, 2 and 4')
    """
    items = [str(v) for v in values]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _known(name: str, names: Iterable[str]) -> bool:
    """Whether ``name`` is among ``names``, case aside."""
    return name.casefold() in {n.casefold() for n in names}


def target_note(domain: ProfileDomain, key: str, target: str) -> str:
    """The note on a target model none of the profile's runs served ('' when one did)."""
    if _known(target, domain.targets):
        return ""
    return f"the {key} profile was fitted on {listed(domain.targets)}: {target} is outside its data"


def hardware_note(domain: ProfileDomain, key: str, hardware: str) -> str:
    """The note on a card none of the profile's runs ran on ('' when one did)."""
    if _known(hardware, domain.hardware):
        return ""
    return f"the {key} profile was fitted on {listed(domain.hardware)}: {hardware} is outside its data"


def drafter_note(domain: ProfileDomain, key: str, drafter: str | None) -> str:
    """The note on a drafter the profile's runs did not use: none of its kind (its engine
    constant, a draft model's or a head's fixed time, was not fitted), or one of its kind but
    not itself ('' for plain decoding or a drafter the runs used)."""
    if drafter is None or _known(drafter, domain.drafters):
        return ""
    if not domain.drafters:
        return f"drafter {drafter}: the {key} profile was fitted on plain runs alone, no drafter among its data"
    kind = kind_of(drafter)
    fitted = f"drafter {drafter}: the {key} profile was fitted on {listed(domain.drafters)}"
    if kind is None:
        return f"{fitted}, not on {drafter}"
    if str(kind) in domain.drafter_kinds:
        return f"{fitted}, not on {drafter} itself ({KIND_WORDS[kind]}, a kind among them)"
    return f"{fitted}, no {KIND_WORDS[kind].split(' ', 1)[1]} among them"


def tensor_parallel_note(domain: ProfileDomain, key: str, tensor_parallel: int) -> str:
    """The note on a number of GPUs the profile's runs did not split the target over ('' when
    they did): a split adds all-reduces and changes each GPU's share of the work."""
    if tensor_parallel in domain.tensor_parallel:
        return ""
    fitted = listed(domain.tensor_parallel)
    return f"tensor parallel {tensor_parallel} is outside the {key} profile's data (fitted at tensor parallel {fitted})"


def concurrency_note(domain: ProfileDomain, key: str, concurrency: int) -> str:
    """The note on a batch below the smallest or above the largest the profile's runs ran
    ('' inside the range: batches between the runs' are interpolated, not extrapolated)."""
    low, high = domain.concurrency
    if concurrency > high:
        return f"concurrency {concurrency} is above the largest batch the {key} profile was fitted on, {high}"
    if concurrency < low:
        return f"concurrency {concurrency} is below the smallest batch the {key} profile was fitted on, {low}"
    return ""


def version_note(domain: ProfileDomain, key: str, version: str | None) -> str:
    """The note on an engine version none of the profile's runs named ('' when one did, or
    the version is not known): a version matches a recorded one that names it
    (``0.10.1`` is in ``vLLM v0.10.1``).

    >>> from specmodel.model.engines import engine_catalog
    >>> domain = engine_catalog()["vllm"].domain
    >>> version_note(domain, "vllm", "0.10.1"), version_note(domain, "vllm", None)
    ('', '')
    """
    if version is None or any(version.removeprefix("v") in recorded for recorded in domain.engine_versions):
        return ""
    return f"the {key} profile was fitted on {listed(domain.engine_versions)}: vLLM {version} is outside its data"


def domain_readout(notes: tuple[str, ...]) -> dict[str, Any]:
    """The ``"domain"`` object of a command's JSON: ``{"inside": bool, "notes": [...]}``."""
    return {"inside": not notes, "notes": list(notes)}


def domain_line(notes: tuple[str, ...]) -> str:
    """The line a command prints after its table when the scenario lies outside the profile's
    data (notes joined by ``; ``), or '' when it lies inside."""
    return f"{OUTSIDE_LEAD}{'; '.join(notes)}" if notes else ""
