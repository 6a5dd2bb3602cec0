"""Time forward passes of the article's target and draft model on a CUDA GPU, for the validation
page's comparison with the model's pass times (``sitebuild/data/pass-timings.json``).

Each model is built with random weights from its architecture in ``specmodel/data/models.toml``
(the fields of its config.json, given to a ``transformers`` config object: nothing is
downloaded), in bfloat16 on the GPU. For every batch of 1 to 256 sequences, a cache of 2,048
tokens per sequence is filled with random keys and values, and a forward pass over 1 query
position per sequence (a plain decode step, a draft step) and over gamma + 1 (a verify pass) is
timed with CUDA events: a few passes to warm up, then the median and the fastest of the
repeats. A batch whose cache does not fit on the card is recorded as out of memory.

    PYTHONPATH=. python tools/time_passes.py             # the site's pair; writes the record
    PYTHONPATH=. python tools/time_passes.py --repeats 20 --out /tmp/timings.json
    PYTHONPATH=. python tools/time_passes.py --hardware h100-sxm   # if the device's name is not enough

It needs PyTorch with CUDA and transformers besides the project's own requirements; it imports
them only when it runs. Without a CUDA GPU it prints one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import sys
from dataclasses import asdict
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

from sitebuild.pass_timings import PassTiming, PassTimings
from sitebuild.paths import PASS_TIMINGS
from specmodel.errors import SpecModelError
from specmodel.model.scenario import DEFAULTS
from specmodel.model.settings import Deployment
from specmodel.model.specs import get_architecture, hardware_catalog

#: Sequences per pass: 1 to 256.
BATCHES = tuple(2**i for i in range(9))
#: Tokens of cache each sequence attends to.
KV_TOKENS = 2048
#: The architecture's fields that are not config.json's.
NOT_CONFIG = {"key", "name", "source", "published_parameters", "published_active_parameters"}
#: Words of a CUDA device's name -> the catalogue's card (specmodel/data/hardware.toml). A PCIe or
#: NVL variant has other bandwidth and arithmetic than the catalogue's SXM card: not matched.
CARDS = {"H100": "h100-sxm", "H200": "h200", "B200": "b200", "A100": "a100-80gb", "L40S": "l40s"}


class Refused(Exception):
    """Why the passes cannot be timed here, in one line."""


def imported(name: str, what: str) -> ModuleType:
    """The module ``name``, imported only now; :class:`Refused` if it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise Refused(f"{what} is not installed: install it with CUDA support on a machine with a GPU") from None


def catalogue_card(device: str, given: str | None) -> str:
    """The catalogue key to price the device's passes with: ``given``, or the one the device's
    name names (:data:`CARDS`); :class:`Refused` if neither."""
    if given is not None:
        if given not in hardware_catalog():
            raise Refused(f"unknown --hardware {given!r}: give one of {', '.join(hardware_catalog())}")
        return given
    words = device.upper().replace("-", " ").split()
    matches = {key for word, key in CARDS.items() if word in words}
    if len(matches) != 1 or {"PCIE", "NVL"} & set(words):
        raise Refused(f"cannot tell which catalogue card {device!r} is: give --hardware KEY")
    return matches.pop()


def config_fields(model: str) -> dict[str, Any]:
    """The config.json fields of catalogue model ``model``, as a ``transformers`` config takes them."""
    fields = {k: v for k, v in asdict(get_architecture(model)).items() if k not in NOT_CONFIG and v is not None}
    return {k: v for k, v in fields.items() if not isinstance(v, dict)}


def build_model(torch: Any, transformers: Any, model: str) -> Any:
    """Catalogue model ``model`` with random weights, in bfloat16, on the GPU, in eval mode."""
    fields = config_fields(model)
    config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
    with torch.device("cuda"):
        built = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
    return built.eval()


def random_cache(torch: Any, transformers: Any, config: Any, batch: int, kv: int) -> Any:
    """A cache of ``kv`` tokens of random keys and values for each of ``batch`` sequences."""
    cache = transformers.DynamicCache()
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    shape = (batch, config.num_key_value_heads, kv, head_dim)
    for layer in range(config.num_hidden_layers):
        keys = torch.randn(shape, dtype=torch.bfloat16, device="cuda")
        cache.update(keys, torch.randn_like(keys), layer)
    return cache


def time_pass(
    torch: Any, model: Any, cache: Any, batch: int, positions: int, kv: int, warmup: int, repeats: int
) -> list[float]:
    """Milliseconds of each of ``repeats`` forward passes over ``positions`` new tokens per
    sequence after ``kv`` cached ones (the cache cut back to ``kv`` after each)."""
    ids = torch.randint(0, model.config.vocab_size, (batch, positions), device="cuda")
    where = torch.arange(kv, kv + positions, device="cuda")
    times: list[float] = []
    with torch.inference_mode():
        for i in range(warmup + repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = model(input_ids=ids, position_ids=where.expand(batch, positions), cache_position=where,
                        past_key_values=cache, use_cache=True)  # fmt: skip
            end.record()
            torch.cuda.synchronize()
            del out
            cache.crop(kv)
            if i >= warmup:
                times.append(float(start.elapsed_time(end)))
    return times


def time_model(
    torch: Any, transformers: Any, model: str, role: str, gamma: int, args: argparse.Namespace
) -> tuple[list[PassTiming], str]:
    """Every timing of catalogue model ``model`` (:class:`PassTiming`), and its attention implementation."""
    built = build_model(torch, transformers, model)
    out: list[PassTiming] = []
    for batch in BATCHES:
        for positions in (1, gamma + 1):
            row: dict[str, Any] = {"model": model, "role": role, "batch": batch, "positions": positions}
            cache = None
            try:
                cache = random_cache(torch, transformers, built.config, batch, args.kv)
                ms = time_pass(torch, built, cache, batch, positions, args.kv, args.warmup, args.repeats)
                row |= {"median_ms": statistics.median(ms), "min_ms": min(ms), "repeats": len(ms)}
            except torch.cuda.OutOfMemoryError:
                row["error"] = "out of memory"
            del cache
            gc.collect()
            torch.cuda.empty_cache()
            out.append(PassTiming(**row))
            shown = f"{row['median_ms']:.3f} ms" if "median_ms" in row else row["error"]
            print(f"{model} ({role}): {batch} sequences x {positions} positions: {shown}", file=sys.stderr)
    attention = str(getattr(built.config, "_attn_implementation", "") or "default")
    del built
    gc.collect()
    torch.cuda.empty_cache()
    return out, attention


def main(argv: list[str] | None = None) -> int:
    deployment = Deployment()
    parser = argparse.ArgumentParser(prog="time_passes.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default=deployment.target, help="target model (default: %(default)s)")
    parser.add_argument("--draft", default=deployment.draft, help="draft model (default: %(default)s)")
    parser.add_argument("--gamma", type=int, default=int(DEFAULTS["gamma"]), help="guesses (default: %(default)s)")
    parser.add_argument("--kv", type=int, default=KV_TOKENS, help="cached tokens per sequence (default: %(default)s)")
    parser.add_argument("--hardware", help="catalogue card to price the passes on (default: from the device's name)")
    parser.add_argument("--warmup", type=int, default=3, help="passes before timing (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=10, help="timed passes (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=PASS_TIMINGS, help="record to write (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        for model in (args.target, args.draft):
            get_architecture(model)
        torch = imported("torch", "PyTorch")
        if not torch.cuda.is_available():
            raise Refused("no CUDA GPU is available here (torch.cuda.is_available() is False); run it on a GPU")
        transformers = imported("transformers", "transformers")
        card = torch.cuda.get_device_name(0)
        hardware = catalogue_card(card, args.hardware)
        timings, attention = time_model(torch, transformers, args.target, "target", args.gamma, args)
        timings += time_model(torch, transformers, args.draft, "draft", args.gamma, args)[0]
    except (Refused, SpecModelError) as e:
        print(f"time_passes.py: {e}", file=sys.stderr)
        return 2
    record = PassTimings(
        card=card, hardware=hardware, torch=str(torch.__version__), transformers=str(transformers.__version__),
        cuda=str(torch.version.cuda or ""), dtype="bfloat16", attention=attention, kv_tokens=args.kv,
        gamma=args.gamma, date=date.today().isoformat(), timings=timings,
    )  # fmt: skip
    args.out.write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
    print(f"time_passes.py: {len(timings)} passes timed on {card} ({hardware}); wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
