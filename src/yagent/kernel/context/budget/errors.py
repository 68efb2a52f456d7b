"""budget.errors: the one error hierarchy of the budget package."""

from __future__ import annotations


class BudgetError(ValueError):
    """Root of budget's errors: a window, target or counter that cannot be judged."""


class StalePlanError(BudgetError):
    """The messages handed to `apply_plan` are not the ones the plan was made for."""
