"""spill: output-side overflow — an over-budget output is stored and replaced by a contract text.

Guarantees:
- `Spill.offer(session, output)` returns the output unchanged when it fits `limit` characters.
  Otherwise it stores the whole output under `root/<session>/<locator>` and returns a contract
  text: the whole lines that fit `limit` characters, then a notice saying what was cut (lines
  and bytes shown of the total) and how to fetch the rest (the locator, the next page, the page
  size and its cap).
  If storing fails the output is still cut, and the notice says the rest is NOT retrievable
  (`stored=False`, `error`): truncation is never silent, and never pretends to be recoverable.
  The host's `on_error`, when given, is told of that failure too (the exception itself: a full
  disk can be told from a bad name).
- `Spill.fetch(session, locator, page, count)` pages the stored output by lines (a line longer
  than `MAX_LINE_CHARS` counts as several). `count` ≤ 0 means the default page size, above
  `page_cap` means the cap; a page below 1 means page 1; the `Page` says when it clamped.
- Session ids and locators are judged as safe file names (`is_safe_name`): empty, `.`, `..`,
  anything with `/`, `\\`, `:` (drive-letter and stream forms such as `C:x`), NUL or other
  control characters, or longer than 255 bytes is a `BadNameError` — never a path outside the
  root. As a second wall, the final path is resolved and must still lie inside the resolved root.
- `cleanup(max_age)` removes stored outputs older than `max_age` seconds on the injected clock
  (file times are set from the same clock when stored) and empty session directories, and
  reports what it removed and what it could not.
Refuses: non-positive limits and page sizes (`SpillError`), unknown locators (`NotFoundError`).
Leaves to the host: the budget (`limit`), the tool or command the model uses to fetch (`hint`),
and when to clean up.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from yagent.kernel.durable.clock import Clock as Clock
from yagent.kernel.durable.clock import SystemClock as SystemClock

DEFAULT_LIMIT = 20_000
DEFAULT_PAGE = 200
PAGE_CAP = 1_000
MAX_LINE_CHARS = 2_000
MAX_NAME_BYTES = 255
SUFFIX = ".out"

DEFAULT_HINT = (
    "fetch the rest with locator={locator} page={next_page} count={count} "
    "(pages of {count} lines, at most {cap} per page)"
)


class SpillError(Exception):
    """Root of spill's errors."""


class BadNameError(SpillError, ValueError):
    """A session id or locator that is not a safe file name."""


class NotFoundError(SpillError, LookupError):
    """No stored output under that session and locator (never stored, or cleaned up)."""


def is_safe_name(name: object) -> TypeGuard[str]:
    """True when `name` is one plain file name that cannot point anywhere but where it is put."""
    if not isinstance(name, str) or name in {"", ".", ".."}:
        return False
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return False
    return not any(c in "/\\:" or unicodedata.category(c) in {"Cc", "Cs"} for c in name)


def _check_name(kind: str, name: object) -> str:
    if not is_safe_name(name):
        raise BadNameError(f"spill: {kind} {name!r} is not a safe file name")
    return name


def split_lines(text: str) -> list[str]:
    """Lines as paged: split on newlines (kept), overlong lines cut into `MAX_LINE_CHARS` pieces."""
    lines: list[str] = []
    for line in text.splitlines(keepends=True):
        lines.extend(line[i : i + MAX_LINE_CHARS] for i in range(0, len(line), MAX_LINE_CHARS))
    return lines


@dataclass(frozen=True, slots=True)
class Spilled:
    """What the model gets instead of an output (`text`), and what happened to the rest."""

    text: str
    spilled: bool
    locator: str | None = None
    stored: bool = False
    total_lines: int = 0
    shown_lines: int = 0
    total_bytes: int = 0
    shown_bytes: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a stored output."""

    text: str
    page: int
    count: int
    total_lines: int
    has_more: bool
    clamped: str | None


@dataclass(frozen=True, slots=True)
class Cleanup:
    removed: int
    removed_bytes: int
    failed: tuple[str, ...]


class Spill:
    """Stores over-budget outputs per session under one root and pages them back."""

    def __init__(
        self,
        root: Path | str,
        *,
        limit: int = DEFAULT_LIMIT,
        page_size: int = DEFAULT_PAGE,
        page_cap: int = PAGE_CAP,
        hint: str = DEFAULT_HINT,
        clock: Clock | None = None,
        on_error: Callable[[BaseException], object] | None = None,
    ) -> None:
        if limit <= 0 or page_size <= 0 or page_cap < page_size:
            raise SpillError("spill: limit and page size must be positive, the cap ≥ the page size")
        self._root = Path(root)
        self._limit = limit
        self._page = page_size
        self._cap = page_cap
        try:
            hint.format(locator="x", next_page=2, count=1, cap=1)
        except (KeyError, IndexError, ValueError) as exc:
            raise SpillError(f"spill: the hint template does not format: {exc!r}") from exc
        self._hint = hint
        self._clock = clock or SystemClock()
        self._on_error = on_error

    @property
    def root(self) -> Path:
        return self._root

    def path(self, session: str, locator: str) -> Path:
        """Where an output lives; `BadNameError` for any unsafe name or a path leaving the root."""
        session = _check_name("session id", session)
        locator = _check_name("locator", locator)
        root = self._root.resolve()
        candidate = (root / session / (locator + SUFFIX)).resolve()
        if not candidate.is_relative_to(root) or candidate.parent.parent != root:
            raise BadNameError(f"spill: {session!r}/{locator!r} resolves outside the spill root")
        return candidate

    def offer(self, session: str, output: str) -> Spilled:
        """The output if it fits, else its head plus the contract notice (storing the whole)."""
        _check_name("session id", session)
        if len(output) <= self._limit:
            return Spilled(output, spilled=False)
        lines = split_lines(output)
        locator = "sp-" + hashlib.sha256(output.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        shown, used = 0, 0
        while shown < len(lines) and used + len(lines[shown]) <= self._limit:
            used += len(lines[shown])
            shown += 1
        head = "".join(lines[:shown])
        total_bytes = len(output.encode("utf-8", "surrogatepass"))
        shown_bytes = len(head.encode("utf-8", "surrogatepass"))
        shown_desc = f"lines 1-{shown}" if shown else "no lines"
        try:
            self._store(session, locator, output)
        except (OSError, SpillError) as exc:
            if self._on_error is not None:
                self._on_error(exc)
            notice = (
                f"[output cut: showing {shown_desc} of {len(lines)} ({shown_bytes} of "
                f"{total_bytes} bytes). The rest could NOT be stored ({exc}) and is lost; "
                "narrow the request to see it.]"
            )
            return Spilled(
                _join(head, notice), True, None, False, len(lines), shown, total_bytes,
                shown_bytes, str(exc),
            )  # fmt: skip
        hint = self._hint.format(
            locator=locator, next_page=shown // self._page + 1, count=self._page, cap=self._cap
        )
        notice = (
            f"[output cut: showing {shown_desc} of {len(lines)} ({shown_bytes} of "
            f"{total_bytes} bytes). The full output is stored; {hint}.]"
        )
        return Spilled(
            _join(head, notice), True, locator, True, len(lines), shown, total_bytes, shown_bytes
        )

    def _store(self, session: str, locator: str, output: str) -> None:
        path = self.path(session, locator)
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(path.name + ".tmp")
        temp.write_text(output, encoding="utf-8", errors="surrogatepass", newline="")
        now = self._clock.now()
        os.utime(temp, (now, now))
        os.replace(temp, path)

    def fetch(self, session: str, locator: str, page: int = 1, count: int = 0) -> Page:
        """Page `page` (1-based) of `count` lines of a stored output, with `count` clamped."""
        path = self.path(session, locator)
        clamped: list[str] = []
        if count <= 0:
            count = self._page
            clamped.append(f"count defaulted to {count}")
        elif count > self._cap:
            count = self._cap
            clamped.append(f"count clamped to the cap {count}")
        if page < 1:
            clamped.append(f"page {page} read as 1")
            page = 1
        try:
            with path.open(encoding="utf-8", errors="surrogatepass", newline="") as stream:
                text = stream.read()
        except FileNotFoundError as exc:
            raise NotFoundError(f"spill: nothing stored as {locator!r} in {session!r}") from exc
        lines = split_lines(text)
        start = (page - 1) * count
        chunk = lines[start : start + count]
        return Page(
            "".join(chunk),
            page,
            count,
            len(lines),
            start + count < len(lines),
            "; ".join(clamped) or None,
        )

    def cleanup(self, max_age: float) -> Cleanup:
        """Remove outputs stored more than `max_age` seconds ago, and emptied session folders."""
        if not self._root.is_dir():
            return Cleanup(0, 0, ())
        cutoff = self._clock.now() - max_age
        removed, removed_bytes, failed = 0, 0, []
        for session in sorted(self._root.iterdir()):
            if not session.is_dir() or session.is_symlink():
                continue
            for item in sorted(session.iterdir()):
                try:
                    info = item.lstat()
                    if info.st_mtime < cutoff:
                        item.unlink()
                        removed += 1
                        removed_bytes += info.st_size
                except OSError as exc:
                    failed.append(f"{item}: {exc}")
            try:
                if not any(session.iterdir()):
                    session.rmdir()
            except OSError as exc:
                failed.append(f"{session}: {exc}")
        return Cleanup(removed, removed_bytes, tuple(failed))


def _join(head: str, notice: str) -> str:
    if head and not head.endswith("\n"):
        head += "\n"
    return head + notice
