"""offload: large inline objects leave the messages — content-addressed, two-phase, fail-soft.

Guarantees:
- `Offloader.process(value, seen=...)` walks a JSON-like value (dicts, lists, tuples, strings,
  bytes) and finds large inline objects: `data:...;base64,` URIs, bare base64 runs and `bytes`
  values whose decoded size is at least `min_bytes`. Each is identified by the sha256 of its
  decoded bytes, so the same image sent twice, in either form, is one object.
- Two phases: an object whose digest is not in `seen` is only MARKED (left inline: the model is
  seeing it now) and its digest joins `Outcome.seen`. An object already in `seen` (the model saw
  it in an earlier turn) is put in the store and replaced by a placeholder naming its media
  type, size and digest. So the model never meets a placeholder for something it never saw.
- Fail-soft: when the store fails, the object stays inline and `Outcome.kept` says which and why;
  the request goes on. Content that only looks like base64 but does not decode is left alone.
- The store is content-addressed and de-duplicating: `put` of a digest already stored writes
  nothing; `FileStore` verifies the digest on the way in and on the way out (corruption is an
  `OffloadError`, never wrong bytes). Digests are exactly 64 lower-case hex characters
  (`BadDigestError` otherwise), so a digest can never name a path outside the store.
- Containers nested deeper than `MAX_DEPTH` are left as they are and counted (`skipped_deep`).
- A text shorter than the shortest object text (`shortest`, `can_hold`) is passed without a scan:
  the scan could find nothing in it.
Refuses: a non-positive `min_bytes`.
Leaves to the host: keeping `seen` between turns (per conversation), wire formats whose fields
cannot hold text (convert such parts using `Outcome.replaced`), and giving the model a way to
fetch an object back (`Offloader.fetch`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

DEFAULT_MIN_BYTES = 16 * 1024
MAX_DEPTH = 64
OCTET_STREAM = "application/octet-stream"

_DIGEST = re.compile(r"[0-9a-f]{64}")


class OffloadError(Exception):
    """Root of offload's errors (a store that cannot deliver what it was given)."""


class BadDigestError(OffloadError, ValueError):
    """Not a sha256 hex digest."""


class MissingError(OffloadError, LookupError):
    """Nothing stored under that digest."""


class Store(Protocol):
    """Content-addressed storage: `put` is idempotent per digest."""

    def put(self, digest: str, data: bytes) -> None: ...

    def get(self, digest: str) -> bytes: ...


def check_digest(digest: object) -> str:
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise BadDigestError(f"offload: {digest!r} is not a sha256 hex digest")
    return digest


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileStore:
    """Objects as files `root/<first two hex>/<digest>`, written atomically, verified on read."""

    def __init__(self, root: Path | str) -> None:
        self._root = Path(root)

    def _path(self, digest: str) -> Path:
        digest = check_digest(digest)
        return self._root / digest[:2] / digest

    def has(self, digest: str) -> bool:
        return self._path(digest).is_file()

    def put(self, digest: str, data: bytes) -> None:
        path = self._path(digest)
        if digest_of(data) != digest:
            raise OffloadError(f"offload: the data does not hash to {digest}")
        if path.is_file():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{digest}.{secrets.token_hex(6)}.tmp")
        try:
            temp.write_bytes(data)
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)

    def get(self, digest: str) -> bytes:
        path = self._path(digest)
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise MissingError(f"offload: nothing stored as {digest}") from exc
        if digest_of(data) != digest:
            raise OffloadError(f"offload: the stored object {digest} is corrupt")
        return data


@dataclass(frozen=True, slots=True)
class Found:
    """One large inline object: what it is and how it appeared (`data_uri`, `base64`, `bytes`)."""

    digest: str
    size: int
    media_type: str
    form: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """The processed value and what happened to each object in it."""

    value: Any
    seen: frozenset[str]
    marked: tuple[Found, ...]
    replaced: tuple[Found, ...]
    kept: tuple[tuple[Found, str], ...]
    skipped_deep: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.replaced)


def default_placeholder(found: Found) -> str:
    return (
        f"[offloaded {found.media_type}, {found.size} bytes, sha256:{found.digest} — shown to you "
        "in an earlier turn; the original is stored by that digest]"
    )


def _pattern(min_bytes: int) -> re.Pattern[str]:
    run = -(-min_bytes * 4 // 3)  # base64 characters needed for min_bytes decoded bytes
    return re.compile(
        r"data:(?P<mime>[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+)?(?:;[A-Za-z0-9.+-]+=[A-Za-z0-9.+-]+)*"
        r";base64,(?P<uri>[A-Za-z0-9+/]*={0,2})"
        rf"|(?<![A-Za-z0-9+/=])(?P<bare>[A-Za-z0-9+/]{{{run},}}={{0,2}})(?![A-Za-z0-9+/=])"
    )


class _Pass:
    """One walk over a value (the per-call state of `Offloader.process`)."""

    def __init__(self, owner: Offloader, seen: frozenset[str]) -> None:
        self.owner = owner
        self.seen = seen
        self.new_seen: set[str] = set()
        self.marked: dict[str, Found] = {}
        self.replaced: dict[str, Found] = {}
        self.kept: dict[str, tuple[Found, str]] = {}
        self.skipped_deep = 0

    def visit(self, found: Found, data: bytes) -> str | None:
        """The placeholder to put instead of the object, or None to leave it inline."""
        if found.digest not in self.seen:
            self.new_seen.add(found.digest)
            self.marked.setdefault(found.digest, found)
            return None
        if found.digest not in self.replaced:
            try:
                self.owner.store.put(found.digest, data)
            except Exception as exc:
                self.kept.setdefault(found.digest, (found, f"store failed: {exc!r}"))
                return None
            self.replaced[found.digest] = found
        return self.owner.placeholder(found)

    def text(self, text: str) -> str:
        swapped = False

        def swap(match: re.Match[str]) -> str:
            nonlocal swapped
            payload = match.group("uri") if match.group("bare") is None else match.group("bare")
            try:
                data = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                return match.group()
            if len(data) < self.owner.min_bytes:
                return match.group()
            if match.group("bare") is None:
                found = Found(
                    digest_of(data), len(data), match.group("mime") or OCTET_STREAM, "data_uri"
                )
            else:
                found = Found(digest_of(data), len(data), OCTET_STREAM, "base64")
            placeholder = self.visit(found, data)
            if placeholder is None:
                return match.group()
            swapped = True
            return placeholder

        out = self.owner.pattern.sub(swap, text)
        return out if swapped else text

    def walk(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes | bytearray):
            if len(value) < self.owner.min_bytes:
                return value
            data = bytes(value)
            placeholder = self.visit(Found(digest_of(data), len(data), OCTET_STREAM, "bytes"), data)
            return value if placeholder is None else placeholder
        if not isinstance(value, dict | list | tuple):
            return value
        if depth >= MAX_DEPTH:
            self.skipped_deep += 1
            return value
        if isinstance(value, dict):
            items = {k: self.walk(v, depth + 1) for k, v in value.items()}
            same = all(items[k] is value[k] for k in value)
            return value if same else items
        walked = [self.walk(v, depth + 1) for v in value]
        if all(a is b for a, b in zip(walked, value, strict=True)):
            return value
        return walked if isinstance(value, list) else tuple(walked)


class Offloader:
    """Finds large inline objects and moves the ones the model has already seen into a store."""

    def __init__(
        self,
        store: Store,
        *,
        min_bytes: int = DEFAULT_MIN_BYTES,
        placeholder: Callable[[Found], str] = default_placeholder,
    ) -> None:
        if min_bytes <= 0:
            raise OffloadError(f"offload: min_bytes must be positive, got {min_bytes}")
        self.store = store
        self.min_bytes = min_bytes
        self.placeholder = placeholder
        self.pattern = _pattern(min_bytes)
        # The fewest characters an object's text takes: a bare run needs this many, and a data
        # URI's payload decodes to at most 3 bytes per 4 characters, so `min_bytes` take as many.
        self.shortest = -(-min_bytes * 4 // 3)

    def can_hold(self, text: str) -> bool:
        """False when `text` is too short to hold any object (then `process` finds nothing)."""
        return len(text) >= self.shortest

    def process(self, value: Any, *, seen: frozenset[str] = frozenset()) -> Outcome:
        """Mark new objects, replace already-seen ones; `value` itself is never mutated."""
        if type(value) is str and len(value) < self.shortest:  # nothing fits: no scan
            return Outcome(value, seen, (), (), ())
        state = _Pass(self, seen)
        out = state.walk(value, 0)
        return Outcome(
            out,
            seen | state.new_seen,
            tuple(state.marked.values()),
            tuple(state.replaced.values()),
            tuple(state.kept.values()),
            state.skipped_deep,
        )

    def fetch(self, digest: str) -> bytes:
        """The original bytes of an offloaded object."""
        return self.store.get(check_digest(digest))
