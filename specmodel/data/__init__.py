"""The data files, each number with its source: hardware, models, heads, engine profiles,
public measurements and the calibration table."""
