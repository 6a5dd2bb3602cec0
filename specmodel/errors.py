"""The one exception type the package raises for bad input."""


class SpecModelError(ValueError):
    """Bad input: the message names the value and what is allowed."""
