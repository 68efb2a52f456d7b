"""benchlib: how a benchmark declares its bounds and says whether it met them.

Contract:
- `Report.figure(name, value, unit, bound=..., within="max"|"min", **extra)` prints one JSON line.
  A figure with a bound carries `bound`, `within` (`max`: the value may not exceed the bound;
  `min`: it may not fall below it) and `pass` (the verdict, computed here, never by hand).
- `Report.exit_code()` is 1 when any declared bound was missed, else 0: a benchmark that misses
  its bound fails, whatever its author hoped.
- `interleaved(a, b, pairs)` measures two callables in alternating pairs (a, b, b, a, ...) and
  returns the medians and the median of the per-pair ratios b/a: on a noisy shared machine a drift
  hits both sides of a pair alike, so the ratio is meaningful where two separate medians are not.
- `bytecode_cached(src)` writes the bytecode of every module under `src` before a start-up is
  measured: an installed yagent runs from bytecode written at install, so a process that compiles
  yagent's sources on each start (`PYTHONDONTWRITEBYTECODE=1`, a fresh checkout) measures the
  compiler, not the start-up.
`bench/run.py` reads these lines and prints one summary line per benchmark.
"""

from __future__ import annotations

import compileall
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Within = Literal["max", "min"]


@dataclass
class Report:
    """Prints figures and remembers which declared bounds were missed."""

    missed: list[str] = field(default_factory=list)

    def figure(
        self,
        name: str,
        value: float,
        unit: str,
        *,
        bound: float | None = None,
        within: Within = "max",
        **extra: Any,
    ) -> dict[str, Any]:
        line: dict[str, Any] = {"name": name, "value": value, "unit": unit}
        if bound is not None:
            ok = value <= bound if within == "max" else value >= bound
            line |= {"bound": bound, "within": within, "pass": ok}
            if not ok:
                self.missed.append(name)
        line |= extra
        print(json.dumps(line), flush=True)
        return line

    def exit_code(self) -> int:
        return 1 if self.missed else 0


@dataclass(frozen=True, slots=True)
class Pairs:
    """Medians of two interleaved series and the median of their per-pair ratios (b / a)."""

    a: float
    b: float
    ratio: float
    pairs: int
    ratios: tuple[float, ...] = ()  # every pair's b / a, in the order measured


def interleaved(a: Callable[[], float], b: Callable[[], float], pairs: int) -> Pairs:
    """Run `a` and `b` alternately (a b, b a, ...); each returns its own measured cost."""
    xs: list[float] = []
    ys: list[float] = []
    for i in range(pairs):
        if i % 2:
            y, x = b(), a()
        else:
            x, y = a(), b()
        xs.append(x)
        ys.append(y)
    ratios = [y / x for x, y in zip(xs, ys, strict=True) if x > 0]
    return Pairs(
        statistics.median(xs),
        statistics.median(ys),
        statistics.median(ratios),
        pairs,
        tuple(ratios),
    )


def bytecode_cached(src: str) -> None:
    """Write the bytecode of every module under `src` (see the module contract); a module that
    cannot be compiled is an error, not a start-up measured from source."""
    if not compileall.compile_dir(src, quiet=1):
        raise RuntimeError(f"compileall failed under {src}")
