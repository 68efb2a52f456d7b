"""A run's conversation as it grows, and the requests' views of it: a request in O(1), not O(n).

A stateless chat request carries every message of the history, and an agent run makes one request
per step: copying the history into each request (a tuple of n references, each message's
reference count touched, a container of n the garbage collector walks while it is young) makes
step k cost O(k) — a 1 000-step run's last steps measurably dearer than its first.

Contract:
- `History` is the loop's conversation: `append` adds a message at the end, `replace` puts a
  rewritten conversation in its place (offload, compaction), `view()` returns the messages as
  they are now, as a `Messages`, in O(1) — whatever the length of the history.
- A `Messages` never changes: a view over the history holds the history's store and its length
  when it was taken; the store is only appended to after that, and `replace` starts a new store,
  so a view taken before still reads what it read (tested: a view taken, then appends and a
  replace, reads the same messages). `Messages(iterable)` builds a view of its own store (a copy).
- `later.extends(earlier)` answers in O(1), with no message compared, whether `earlier` is a
  prefix of `later` by construction (views of one store): what a consumer that works
  incrementally (counting, encoding) needs to know to look only at the new messages. False does
  not mean "not a prefix", only "not known to be": the caller then compares.
- A `Messages` is a read-only `Sequence`: indexing, negative indices, slices (a tuple), `len`,
  iteration; equal to another `Messages` or a tuple with equal messages in the same order.
Leaves to the caller: what the messages are; an engine still sends every message
(docs/adr/0032-requests-carry-a-view-of-the-history.md).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from yagent.llm.types import Message

__all__ = ["History", "Messages"]


class Messages(Sequence[Message]):
    """An immutable run of messages: the first `len` messages of an append-only store."""

    __slots__ = ("_size", "_store")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._store: list[Message] = list(messages)
        self._size = len(self._store)

    @classmethod
    def _over(cls, store: list[Message]) -> Messages:
        view = cls.__new__(cls)
        view._store, view._size = store, len(store)
        return view

    def extends(self, earlier: Messages) -> bool:
        """`earlier` is known, without comparing a message, to be a prefix of this view."""
        return earlier._store is self._store and earlier._size <= self._size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            return tuple(map(self._store.__getitem__, range(self._size)[index]))
        position = index + self._size if index < 0 else index
        if not 0 <= position < self._size:
            raise IndexError(f"message index {index} out of range for {self._size} messages")
        return self._store[position]

    def __iter__(self) -> Iterator[Message]:
        return itertools.islice(self._store, self._size)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Messages):
            if self.extends(other) and other._size == self._size:
                return True
            return len(other) == self._size and all(map(operator.eq, self, other))
        if isinstance(other, tuple):
            return len(other) == self._size and all(map(operator.eq, self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Messages({self._size} messages)"


class History:
    """The loop's conversation: appended to, rewritten whole, seen through O(1) views."""

    __slots__ = ("_store",)

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._store: list[Message] = list(messages)

    def append(self, message: Message) -> None:
        self._store.append(message)  # views taken before end where they ended

    def replace(self, messages: Sequence[Message]) -> None:
        """The conversation rewritten: a new store, so views taken before keep reading theirs."""
        self._store = list(messages)

    def view(self) -> Messages:
        return Messages._over(self._store)

    def __len__(self) -> int:
        return len(self._store)
