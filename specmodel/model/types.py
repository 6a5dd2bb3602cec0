"""Array types of the numeric core (numpy.typing): every formula works elementwise on
scalars or on numpy arrays that broadcast."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

#: An array of floats (SI units).
FloatArray: TypeAlias = npt.NDArray[np.float64]
#: An array of integers (counts: sequences, tokens, positions).
IntArray: TypeAlias = npt.NDArray[np.int64]
#: An array of booleans (e.g. whether each scenario fits in memory).
BoolArray: TypeAlias = npt.NDArray[np.bool_]
#: An array of names (drafters, profiles).
StrArray: TypeAlias = npt.NDArray[np.str_]
#: A number or an array of them: what the elementwise formulas take and give.
Numeric: TypeAlias = "float | FloatArray"
