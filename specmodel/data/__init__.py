"""The data files, each number with its source: hardware, models, heads, engine profiles,
public measurements and the calibration table; and the notation, each symbol with its meaning
(``notation.toml``, :mod:`specmodel.notation`)."""
