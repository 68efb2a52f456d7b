"""offload: detection, sha256 de-duplication, the two phases, fail-soft, the file store."""

from __future__ import annotations

import base64
import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.context import offload
from yagent.kernel.context.offload import (
    BadDigestError,
    FileStore,
    Found,
    MissingError,
    Offloader,
    OffloadError,
    digest_of,
)

MIN = 1024
IMAGE = bytes(range(256)) * 8  # 2048 bytes
IMAGE_B64 = base64.b64encode(IMAGE).decode()
DATA_URI = f"data:image/png;base64,{IMAGE_B64}"
DIGEST = hashlib.sha256(IMAGE).hexdigest()


def message(content: Any) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": content}]


def make(tmp_path: Path) -> tuple[Offloader, FileStore]:
    store = FileStore(tmp_path / "objects")
    return Offloader(store, min_bytes=MIN), store


def test_first_sighting_only_marks(tmp_path: Path) -> None:
    off, store = make(tmp_path)
    value = message([{"type": "text", "text": "look"}, {"type": "image", "url": DATA_URI}])
    out = off.process(value)
    assert out.value is value
    assert not out.changed
    assert out.seen == frozenset({DIGEST})
    assert out.marked == (Found(DIGEST, len(IMAGE), "image/png", "data_uri"),)
    assert out.replaced == ()
    assert not store.has(DIGEST)


def test_a_later_turn_replaces_with_a_placeholder(tmp_path: Path) -> None:
    off, store = make(tmp_path)
    value = message(f"see ![shot]({DATA_URI}) above")
    first = off.process(value)
    original = copy.deepcopy(value)
    second = off.process(value, seen=first.seen)
    assert value == original  # never mutated
    assert second.changed
    assert second.marked == ()
    text = second.value[1]["content"]
    assert text.startswith("see ![shot]([offloaded image/png, 2048 bytes, sha256:" + DIGEST)
    assert text.endswith(") above")
    assert IMAGE_B64 not in text
    assert second.value[0] is value[0]  # untouched parts are shared, not copied
    assert store.get(DIGEST) == IMAGE
    assert off.fetch(DIGEST) == IMAGE


def test_same_object_in_two_forms_is_one_object(tmp_path: Path) -> None:
    off, _ = make(tmp_path)
    value = message([DATA_URI, f"raw {IMAGE_B64} raw", IMAGE])
    first = off.process(value)
    assert first.seen == frozenset({DIGEST})
    assert len(first.marked) == 1
    second = off.process(value, seen=first.seen)
    assert len(second.replaced) == 1
    content = second.value[1]["content"]
    assert all(f"sha256:{DIGEST}" in part for part in content)
    assert content[1].startswith("raw [offloaded application/octet-stream")
    assert (tmp_path / "objects" / DIGEST[:2] / DIGEST).read_bytes() == IMAGE
    assert len(list((tmp_path / "objects").rglob("*"))) == 2  # one folder, one object


def test_new_objects_next_to_seen_ones_are_marked_not_replaced(tmp_path: Path) -> None:
    off, _ = make(tmp_path)
    other = base64.b64encode(b"\x01" * 4096).decode()
    first = off.process(message(DATA_URI))
    out = off.process(message([DATA_URI, f"data:image/jpeg;base64,{other}"]), seen=first.seen)
    assert [f.digest for f in out.replaced] == [DIGEST]
    assert [f.media_type for f in out.marked] == ["image/jpeg"]
    assert out.value[1]["content"][1].endswith(other)
    assert len(out.seen) == 2


def test_small_objects_and_non_base64_stay(tmp_path: Path) -> None:
    off, _ = make(tmp_path)
    small = base64.b64encode(b"x" * 100).decode()
    looks_like = "A" * 2001  # the right alphabet, but 2001 characters never decode
    words = "word " * 2000
    value = message([f"data:image/png;base64,{small}", looks_like, words, b"x" * 10, 42, None])
    for seen in (frozenset(), frozenset({DIGEST})):
        out = off.process(value, seen=seen)
        assert out.value is value
        assert out.marked == ()
        assert out.replaced == ()


def test_bytes_values_are_objects(tmp_path: Path) -> None:
    off, _ = make(tmp_path)
    blob = bytearray(b"\x00\xff" * 1024)
    first = off.process({"attachment": blob})
    assert first.marked[0].form == "bytes"
    second = off.process({"attachment": blob}, seen=first.seen)
    assert second.value["attachment"].startswith("[offloaded application/octet-stream, 2048 bytes")
    assert off.fetch(digest_of(bytes(blob))) == bytes(blob)


def test_tuples_stay_tuples(tmp_path: Path) -> None:
    off, _ = make(tmp_path)
    first = off.process((DATA_URI, "x"))
    out = off.process((DATA_URI, "x"), seen=first.seen)
    assert isinstance(out.value, tuple)
    assert out.value[1] == "x"


class BrokenStore:
    def __init__(self) -> None:
        self.attempts = 0

    def put(self, digest: str, data: bytes) -> None:
        self.attempts += 1
        raise OSError("store offline")

    def get(self, digest: str) -> bytes:
        raise MissingError(digest)


def test_store_failure_keeps_the_original_and_says_so() -> None:
    store = BrokenStore()
    off = Offloader(store, min_bytes=MIN)
    value = message([DATA_URI, DATA_URI])
    out = off.process(value, seen=frozenset({DIGEST}))
    assert out.value is value
    assert not out.changed
    assert len(out.kept) == 1
    found, why = out.kept[0]
    assert found.digest == DIGEST
    assert "store offline" in why
    assert store.attempts == 2  # each sighting tries again; neither is replaced


def test_custom_placeholder(tmp_path: Path) -> None:
    off = Offloader(
        FileStore(tmp_path), min_bytes=MIN, placeholder=lambda f: f"<obj {f.digest[:8]}>"
    )
    out = off.process(f"x{DATA_URI}y", seen=frozenset({DIGEST}))
    assert out.value == f"x<obj {DIGEST[:8]}>y"


def test_data_uri_without_media_type_and_with_parameters(tmp_path: Path) -> None:
    off, _ = make(tmp_path)
    for uri, media in [
        (f"data:;base64,{IMAGE_B64}", offload.OCTET_STREAM),
        (f"data:text/plain;charset=utf-8;base64,{IMAGE_B64}", "text/plain"),
    ]:
        out = off.process(uri)
        assert out.marked[0].media_type == media


def test_deep_nesting_is_left_alone_and_counted(tmp_path: Path) -> None:
    off, _ = make(tmp_path)
    value: Any = DATA_URI
    for _ in range(offload.MAX_DEPTH + 5):
        value = [value]
    out = off.process(value, seen=frozenset({DIGEST}))
    assert out.skipped_deep == 1
    assert out.value is value


def test_bad_min_bytes_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OffloadError):
        Offloader(FileStore(tmp_path), min_bytes=0)


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=MIN, max_size=3 * MIN), st.text(max_size=30), st.text(max_size=30))
def test_round_trip_property(data: bytes, before: str, after: str) -> None:
    """Whatever surrounds it, a seen object is replaced and the stored bytes are the original."""

    class Memory:
        def __init__(self) -> None:
            self.objects: dict[str, bytes] = {}

        def put(self, digest: str, blob: bytes) -> None:
            self.objects[digest] = blob

        def get(self, digest: str) -> bytes:
            return self.objects[digest]

    store = Memory()
    off = Offloader(store, min_bytes=MIN)
    text = f"{before} data:application/pdf;base64,{base64.b64encode(data).decode()} {after}"
    first = off.process(text)
    assert first.value == text
    second = off.process(text, seen=first.seen)
    assert second.value.startswith(before + " [offloaded application/pdf")
    assert off.fetch(digest_of(data)) == data


# --- the file store ---------------------------------------------------------------------------


def test_file_store_dedups_and_verifies(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.put(DIGEST, IMAGE)
    path = tmp_path / DIGEST[:2] / DIGEST
    mtime = path.stat().st_mtime_ns
    store.put(DIGEST, IMAGE)
    assert path.stat().st_mtime_ns == mtime
    assert store.has(DIGEST)
    with pytest.raises(OffloadError, match="does not hash"):
        store.put(digest_of(b"other"), IMAGE)
    path.write_bytes(b"tampered")
    with pytest.raises(OffloadError, match="corrupt"):
        store.get(DIGEST)
    with pytest.raises(MissingError):
        store.get(digest_of(b"never"))
    assert list(tmp_path.rglob("*.tmp")) == []


@pytest.mark.parametrize(
    "digest",
    ["", "../" + "a" * 61, "A" * 64, "a" * 63, "a" * 65, "g" * 64, DIGEST[:62] + "/.", None],
)
def test_bad_digests_are_refused(tmp_path: Path, digest: object) -> None:
    store = FileStore(tmp_path)
    with pytest.raises(BadDigestError):
        store.get(digest)  # type: ignore[arg-type]
    with pytest.raises(BadDigestError):
        Offloader(store).fetch(digest)  # type: ignore[arg-type]


def test_file_store_cleans_its_temp_file_when_the_write_fails(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    (tmp_path / DIGEST[:2]).mkdir()
    (tmp_path / DIGEST[:2] / DIGEST).mkdir()  # a directory where the object would go
    with pytest.raises(IsADirectoryError):
        store.put(DIGEST, IMAGE)
    assert list(tmp_path.rglob("*.tmp")) == []


class _Counting(offload.Store):
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put(self, digest: str, data: bytes) -> None:
        self.objects[digest] = data

    def get(self, digest: str) -> bytes:
        return self.objects[digest]


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@st.composite
def _near_the_bound(draw: st.DrawFn) -> tuple[int, str]:
    """A minimum size and a text made of base64 runs, data URIs and words around it."""
    least = draw(st.integers(min_value=1, max_value=40))
    shortest = -(-least * 4 // 3)
    pieces = draw(
        st.lists(
            st.one_of(
                st.text(alphabet=_B64 + "=", min_size=max(0, shortest - 3), max_size=shortest + 4),
                st.binary(min_size=max(0, least - 2), max_size=least + 2).map(
                    lambda b: base64.b64encode(b).decode()
                ),
                st.binary(min_size=max(0, least - 2), max_size=least + 2).map(
                    lambda b: "data:image/png;base64," + base64.b64encode(b).decode()
                ),
                st.sampled_from([" ", "\n", "data:", ";base64,", "word", "="]),
            ),
            max_size=4,
        )
    )
    return least, "".join(pieces)


@settings(max_examples=400, deadline=None)
@given(case=_near_the_bound(), seen_first=st.booleans())
def test_a_text_shorter_than_any_object_is_passed_without_a_scan(
    case: tuple[int, str], seen_first: bool
) -> None:
    least, text = case
    off = Offloader(_Counting(), min_bytes=least)
    seen = off.process(text).seen if seen_first else frozenset()
    out = off.process(text, seen=seen)
    scan = offload._Pass(off, seen)  # the scan every text had before the fast path
    assert out.value == scan.walk(text, 0)
    assert (out.marked, out.replaced) == (
        tuple(scan.marked.values()),
        tuple(scan.replaced.values()),
    )
    if not off.can_hold(text):  # then the scan finds nothing, and the fast path says so
        assert len(text) < off.shortest
        assert (scan.marked, scan.replaced, scan.kept) == ({}, {}, {})
        assert out.value is text
        assert out.seen == seen


def test_the_shortest_object_text_is_at_the_bound() -> None:
    least = 1023  # a multiple of 3: its base64 text has no padding and is exactly the bound
    off = Offloader(_Counting(), min_bytes=least)
    run = base64.b64encode(bytes(range(256)) * 3 + bytes(least - 768)).decode()
    assert len(run) == off.shortest
    assert off.can_hold(run)
    assert off.process(run).marked
    assert not off.can_hold(run[:-4])
    assert not off.process(run[:-4]).marked
