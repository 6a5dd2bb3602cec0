"""How numbers are written, once, for the CLI, ``advise``, the article's prose and the
simulator: speedups as ``1.93x``, shares as ``26%``, plain numbers with thousands
separators, bytes in GiB; and the verdict a speedup earns.

The model works in SI units; these functions only format. The verdict is read off the
speedup *as printed*, so the words always agree with the number beside them.
"""

from __future__ import annotations

import math
from typing import Literal

GIB = 2.0**30
KIB = 2.0**10

Style = Literal["number", "times", "percent"]


def times(value: float, decimals: int = 2) -> str:
    """A ratio as ``1.93x``.

    >>> times(1.9288), times(0.8856, 3)
    ('1.93x', '0.886x')
    """
    return f"{value:.{decimals}f}x"


def times_distinct(value: float) -> str:
    """A speedup as ``1.93x``, with three decimals where two would print a gain or a loss as
    ``1.00x``.

    >>> times_distinct(1.9288), times_distinct(1.0009), times_distinct(1.0)
    ('1.93x', '1.001x', '1.00x')
    """
    if f"{value:.2f}" == "1.00" and value != 1.0:
        return times(value, 3)
    return times(value)


def percent(share: float, decimals: int = 0, signed: bool = False) -> str:
    """A share (0..1) as ``26%``; ``signed``: with its sign, as an error is (``+7%``).

    >>> percent(0.2612), percent(0.0457, 1), percent(0.07, signed=True), percent(-0.2, signed=True)
    ('26%', '4.6%', '+7%', '-20%')
    """
    return f"{100 * share:{'+' if signed else ''}.{decimals}f}%"


def plain(value: float, decimals: int = 2, unit: str = "") -> str:
    """A number with thousands separators, and its unit after a space if it has one.

    >>> plain(1234.567), plain(7.0, 0, "sequences")
    ('1,234.57', '7 sequences')
    """
    text = f"{value:,.{decimals}f}"
    return f"{text} {unit}" if unit else text


def shown(value: float) -> str:
    """A number as a message echoes it: a whole number without decimals, any other as Python's
    shortest form (never numpy's ``np.float64(...)``, never hundreds of digits).

    >>> shown(float("nan")), shown(3.0), shown(0.25), shown(-2), shown(1e300)
    ('nan', '3', '0.25', '-2', '1e+300')
    """
    x = float(value)
    return str(int(x)) if x.is_integer() and abs(x) < 1e16 else repr(x)


def gib(byte_count: float, decimals: int = 1) -> str:
    """Bytes in GiB: ``15.3 GiB``.

    >>> gib(16 * 2**30)
    '16.0 GiB'
    """
    return f"{byte_count / GIB:,.{decimals}f} GiB"


def number(value: float, style: Style = "number", decimals: int = 2, unit: str = "") -> str:
    """A value in one of the three styles the readouts use (``times``, ``percent`` or a plain
    number with an optional unit).

    >>> number(1.9288, "times"), number(0.26, "percent", 0), number(1234.0, "number", 0, "tokens/s")
    ('1.93x', '26%', '1,234 tokens/s')
    """
    if style == "times":
        return times(value, decimals)
    if style == "percent":
        return percent(value, decimals)
    return plain(value, decimals, unit)


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``1 sequence``, ``64 sequences``.

    >>> plural(1, "sequence"), plural(64, "sequence")
    ('1 sequence', '64 sequences')
    """
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count:,} {word}"


#: A speedup within this share of 1x is called even: the model's calibration tolerance for
#: speedups (3 %, the relative tolerance of the article's speedups in the calibration table).
#: A smaller gain or loss is within the model's own error; ``specmodel advise`` asks a change
#: to gain more than this, and the page, the simulator and every figure call it even.
EVEN_MARGIN = 0.03

#: The verdicts a speedup earns, with the words the page and the CLI print for each.
VERDICTS: dict[str, str] = {
    "faster": "faster than plain decoding",
    "even": "within 3% of plain decoding: about even",
    "slower": "slower than plain decoding: a loss",
}


def verdict(speedup: float, decimals: int = 2) -> str:
    """``faster``, ``even`` or ``slower``: the speedup as printed with ``decimals`` decimals
    against 1 +/- :data:`EVEN_MARGIN`, so the words always agree with the number beside them
    (1.03x and 0.97x are even; 1.04x is faster, 0.96x slower).

    >>> verdict(1.93), verdict(1.03), verdict(1.0), verdict(0.971), verdict(0.964)
    ('faster', 'even', 'even', 'even', 'slower')
    """
    if not math.isfinite(speedup):
        raise ValueError(f"speedup {speedup} is not a finite number")
    printed = round(float(f"{speedup:.{decimals}f}"), decimals)
    high, low = round(1 + EVEN_MARGIN, decimals), round(1 - EVEN_MARGIN, decimals)
    return "faster" if printed > high else "slower" if printed < low else "even"
