"""areas: self-consistency, write/write conflicts, fail-closed access, no wildcards."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.judge.areas import (
    Access,
    Board,
    ConflictError,
    Declaration,
    DeclarationError,
    check,
    conflicts,
    normalise,
)


def test_paths_normalise_by_component() -> None:
    assert normalise("a//b/./c/") == ("a", "b", "c")
    assert normalise(".") == ()
    assert normalise("./") == ()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("src/*.py", "wildcard"),
        ("**", "wildcard"),
        ("src/**/gen", "wildcard"),
        ("/etc", "absolute"),
        ("a/../b", "climbs"),
        ("..", "climbs"),
        ("", "non-empty"),
        ("  ", "non-empty"),
        ("a\0b", "NUL"),
    ],
)
def test_paths_that_cannot_be_compared_exactly_are_refused(path: str, message: str) -> None:
    with pytest.raises(DeclarationError, match=message):
        normalise(path)


def test_the_wildcard_refusal_says_why() -> None:
    with pytest.raises(DeclarationError, match=r"mean different things.*expand the pattern"):
        Declaration.of("w", writable=["src/*"])


def test_a_path_both_read_only_and_writable_is_an_error() -> None:
    with pytest.raises(DeclarationError, match="cannot be both"):
        Declaration.of("w", writable=["src"], read_only=["./src/"])


@pytest.mark.parametrize(
    ("writable", "read_only"), [("src", "src/gen"), ("src/gen", "src"), (".", "docs")]
)
def test_nested_carve_outs_are_refused_too(writable: str, read_only: str) -> None:
    with pytest.raises(DeclarationError, match="cannot be both"):
        Declaration.of("w", writable=[writable], read_only=[read_only])


def test_siblings_with_a_common_prefix_are_not_nested() -> None:
    decl = Declaration.of("w", writable=["src"], read_only=["src2", "srcx/y"])
    assert decl.access("src/a.py") is Access.WRITE
    assert decl.access("src2/a.py") is Access.READ


def test_an_owner_is_required() -> None:
    with pytest.raises(DeclarationError, match="owner"):
        Declaration.of(" ", writable=["a"])


def test_access_is_fail_closed() -> None:
    decl = Declaration.of("w", writable=["src/app"], read_only=["docs", "README.md"])
    assert decl.access("src/app/main.py") is Access.WRITE
    assert decl.access("src/app") is Access.WRITE
    assert decl.access("docs/guide.md") is Access.READ
    assert decl.access("README.md") is Access.READ
    assert decl.access("src") is Access.NONE  # the parent of a writable area is not granted
    assert decl.access("src/lib/x.py") is Access.NONE
    assert decl.access(".") is Access.NONE
    assert decl.can_read("docs/a")
    assert not decl.can_write("docs/a")
    assert decl.can_read("src/app/x")
    assert decl.can_write("src/app/x")
    assert not decl.can_read("tests/x")


def test_an_empty_declaration_grants_nothing() -> None:
    assert Declaration.of("idle").access("anything") is Access.NONE


def test_the_root_grants_everything_below_it() -> None:
    assert Declaration.of("w", writable=["."]).access("deep/down/file") is Access.WRITE


def test_access_queries_refuse_wildcards_too() -> None:
    with pytest.raises(DeclarationError, match="wildcard"):
        Declaration.of("w", writable=["src"]).access("src/*")


def test_overlapping_writable_areas_conflict() -> None:
    a = Declaration.of("a", writable=["src"])
    b = Declaration.of("b", writable=["src/module"])
    found = conflicts([b, a])
    assert len(found) == 1
    assert (found[0].first, found[0].first_path, found[0].second, found[0].second_path) == (
        "a",
        "src",
        "b",
        "src/module",
    )
    with pytest.raises(ConflictError, match="'a' writes 'src' and 'b' writes 'src/module'"):
        check([a, b])


def test_identical_writable_areas_conflict() -> None:
    with pytest.raises(ConflictError):
        check([Declaration.of("a", writable=["x"]), Declaration.of("b", writable=["./x"])])


def test_read_only_overlaps_do_not_conflict() -> None:
    a = Declaration.of("a", writable=["src/a"], read_only=["docs", "lib"])
    b = Declaration.of("b", writable=["src/b"], read_only=["docs", "lib/x"])
    assert conflicts([a, b]) == ()
    check([a, b])


def test_reading_inside_another_writable_area_is_not_a_conflict() -> None:
    writer = Declaration.of("writer", writable=["src"])
    reader = Declaration.of("reader", read_only=["src", "docs"])
    assert conflicts([writer, reader]) == ()


def test_disjoint_writers_with_a_shared_prefix_do_not_conflict() -> None:
    check([Declaration.of("a", writable=["src"]), Declaration.of("b", writable=["src2"])])


def test_every_conflict_is_listed_in_a_stable_order() -> None:
    a = Declaration.of("a", writable=["x", "y"])
    b = Declaration.of("b", writable=["x/1", "y/2"])
    c = Declaration.of("c", writable=["."])
    with pytest.raises(ConflictError) as caught:
        check([c, b, a])
    pairs = [(f.first, f.first_path, f.second, f.second_path) for f in caught.value.conflicts]
    assert pairs == [
        ("a", "x", "b", "x/1"),
        ("a", "y", "b", "y/2"),
        ("a", "x", "c", "."),
        ("a", "y", "c", "."),
        ("b", "x/1", "c", "."),
        ("b", "y/2", "c", "."),
    ]


def test_two_declarations_with_one_owner_are_an_error() -> None:
    with pytest.raises(DeclarationError, match="owned by 'a'"):
        conflicts([Declaration.of("a", writable=["x"]), Declaration.of("a", writable=["y"])])


_segment = st.sampled_from(["a", "b", "c"])
_path = st.lists(_segment, min_size=1, max_size=3).map("/".join)


@given(st.lists(_path, max_size=3), st.lists(_path, max_size=3), st.permutations([0, 1]))
def test_conflict_is_symmetric_and_matches_the_overlap_definition(
    wa: list[str], wb: list[str], order: list[int]
) -> None:
    decls = [Declaration.of("a", writable=wa), Declaration.of("b", writable=wb)]
    found = conflicts([decls[i] for i in order])
    expected = any(
        normalise(x)[: len(normalise(y))] == normalise(y)
        or normalise(y)[: len(normalise(x))] == normalise(x)
        for x in wa
        for y in wb
    )
    assert bool(found) is expected
    assert found == conflicts(decls)


def test_the_board_refuses_a_conflicting_claim_before_it_starts() -> None:
    board = Board()
    board.claim(Declaration.of("a", writable=["src/a"], read_only=["docs"]))
    board.claim(Declaration.of("b", writable=["src/b"], read_only=["docs"]))
    with pytest.raises(ConflictError):
        board.claim(Declaration.of("c", writable=["src"]))
    assert [d.owner for d in board.active()] == ["a", "b"]
    assert board.access("a", "src/a/x") is Access.WRITE
    assert board.access("a", "src/b/x") is Access.NONE
    assert board.access("c", "src/x") is Access.NONE
    assert board.release("a")
    assert not board.release("a")
    board.claim(Declaration.of("c", writable=["src/a"]))
    with pytest.raises(DeclarationError, match="already holds"):
        board.claim(Declaration.of("c", writable=["elsewhere"]))


def test_concurrent_claims_admit_exactly_one_writer() -> None:
    board = Board()
    admitted: list[str] = []
    barrier = threading.Barrier(8)

    def claim(owner: str) -> None:
        barrier.wait()
        try:
            board.claim(Declaration.of(owner, writable=["shared"]))
        except ConflictError:
            return
        admitted.append(owner)

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(admitted) == 1
    assert [d.owner for d in board.active()] == admitted
