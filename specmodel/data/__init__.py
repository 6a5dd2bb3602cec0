"""The data files: hardware, models, heads, literature figures and the calibration table, each with sources."""
