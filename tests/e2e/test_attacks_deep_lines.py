"""A shell line nested thousands deep, against the real product: `yagent run --json -y` against
a scripted OpenAI-compatible server on loopback (see `test_attacks_floods`).

`echo $( $( …` 3 000 deep is 12 KB, under the 16 KB line cap; judging it peaked yagent at 556 MB
(`"$(` ×2 000: 466 MB). cmdpolicy now refuses a line nested deeper than `MAX_SYNTAX_DEPTH` before
walking it: the call is not run (under `-y` too — ADR 0031: a line cmdpolicy cannot read is never
approved by a standing permission), the result says why, and yagent's peak resident memory (read
from /proc) stays near what a plain run costs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_attacks_floods import run
from yagent.kernel.confine.cmdpolicy import decide

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("opening", "closing", "levels"),
    [("$( ", " )", 3000), ('"$(', ')"', 2000)],
    ids=["substitutions", "quoted-substitutions"],
)
def test_a_line_nested_thousands_deep_is_refused_cheaply(
    tmp_path: Path, opening: str, closing: str, levels: int
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    command = "echo " + opening * levels + "touch ran" + closing * levels
    assert len(command.encode()) < decide.MAX_LINE_BYTES
    peaks: list[int] = []
    _sent, results = run(tmp_path, ws, [("run_bash", {"command": command})], peaks=peaks)
    text = str(results[0])
    assert "levels deep" in text, text[:2000]
    assert f"{decide.MAX_SYNTAX_DEPTH}-level limit" in text
    assert not (ws / "ran").exists()
    (peak,) = peaks
    print(f"peak {peak / MIB:.0f} MiB")
    assert peak < 250 * MIB, f"peak {peak / MIB:.0f} MiB"
