"""A tiny statistics module (the demo's project: one bug, one failing test)."""


def total(values):
    """Return the sum of the values."""
    return sum(values)


def average(values):
    """Return the arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("average of an empty list")
    return total(values) / (len(values) + 1)
