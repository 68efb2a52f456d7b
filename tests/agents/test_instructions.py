"""agents.instructions: which files, in which order, what imports may reach, and the budget."""

from __future__ import annotations

from pathlib import Path

from yagent.agents import instructions
from yagent.agents.instructions import Sources, imports_in, render
from yagent.tools.readmask import ReadMask


def test_imports_are_found_outside_code_only() -> None:
    text = "see @a.md, @dir/b.md. mail x@y.com `@c.md` @alice\n```\n@d.md\n```\n@~/e.md"
    assert imports_in(text) == ["a.md", "dir/b.md", "~/e.md"]


def test_a_cycle_and_too_deep_a_chain_are_stated(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("top @n1.md")
    for i in range(1, 8):
        name = "CLAUDE.md" if i == 7 else f"n{i + 1}.md"
        (tmp_path / f"n{i}.md").write_text(f"N{i} @{name}")
    out = render(Sources(tmp_path))
    assert "N5" in out
    assert "N6" not in out
    assert f"imports nest deeper than {instructions.MAX_IMPORT_DEPTH} levels" in out
    (tmp_path / "CLAUDE.md").write_text("top @loop.md")
    (tmp_path / "loop.md").write_text("LOOP @CLAUDE.md")
    out = render(Sources(tmp_path))
    assert "LOOP" in out
    assert "[import @CLAUDE.md skipped: it imports itself through a cycle]" in out
    (tmp_path / "AGENTS.md").write_text("agents @loop.md")
    assert "LOOP" not in render(Sources(tmp_path)), "only CLAUDE.md imports (AGENTS.md does not)"


def test_home_imports_stay_in_the_home_and_never_reach_hidden_paths(tmp_path: Path) -> None:
    user, ws = tmp_path / "user", tmp_path / "ws"
    (user / ".claude").mkdir(parents=True)
    (user / ".ssh").mkdir()
    (user / ".ssh" / "id_rsa").write_text("PRIVATE-KEY")
    (user / "notes.md").write_text("HOME-NOTES")
    ws.mkdir()
    (ws / "w.md").write_text("WS-FILE")
    (user / ".claude" / "CLAUDE.md").write_text("USER @~/notes.md @~/.ssh/id_rsa")
    mask = ReadMask(ws, env={"HOME": str(user)})
    out = render(Sources(ws, home=tmp_path / "yhome", user_home=user, reads=mask))
    assert "### ~/.claude/CLAUDE.md" in out
    assert "HOME-NOTES" in out
    assert "PRIVATE-KEY" not in out
    assert "[import @~/.ssh/id_rsa skipped: the path is hidden" in out
    (ws / "CLAUDE.md").write_text("PROJECT @~/notes.md @w.md")
    out = render(Sources(ws, user_home=user, reads=mask))
    assert "WS-FILE" in out
    assert "[import @~/notes.md skipped: outside" in out, "a repository never imports your home"


def test_the_global_override_wins_and_yagent_global_beats_claude_global(tmp_path: Path) -> None:
    home, user, ws = tmp_path / "yhome", tmp_path / "user", tmp_path / "ws"
    for d in (home, user / ".claude", ws):
        d.mkdir(parents=True)
    (user / ".claude" / "CLAUDE.md").write_text("CLAUDE-GLOBAL")
    assert "CLAUDE-GLOBAL" in render(Sources(ws, home=home, user_home=user))
    (home / "AGENTS.md").write_text("YAGENT-GLOBAL")
    out = render(Sources(ws, home=home, user_home=user))
    assert "YAGENT-GLOBAL" in out
    assert "CLAUDE-GLOBAL" not in out
    (home / "AGENTS.override.md").write_text("OVERRIDE-GLOBAL")
    out = render(Sources(ws, home=home, user_home=user))
    assert "OVERRIDE-GLOBAL" in out
    assert "YAGENT-GLOBAL" not in out


def test_closest_files_keep_their_text_under_the_budget(tmp_path: Path) -> None:
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("R" * 100)
    (tmp_path / "a" / "AGENTS.md").write_text("A" * 100)
    (sub / "AGENTS.md").write_text("B" * 100)
    out = render(Sources(tmp_path, start=sub), budget=150)
    assert "B" * 100 in out
    assert "A" * 50 in out
    assert "A" * 51 not in out
    assert "[a/AGENTS.md truncated: showing 50 of 100 bytes" in out
    assert "[AGENTS.md truncated: showing 0 of 100 bytes" in out
    # started outside the workspace: only the root's own file
    alone = render(Sources(sub, start=tmp_path))
    assert "B" * 100 in alone
    assert "R" not in alone
    assert "A" * 100 not in alone


def test_instruction_files_that_lead_out_or_into_hidden_paths_are_skipped(tmp_path: Path) -> None:
    user, ws = tmp_path / "user", tmp_path / "ws"
    (user / ".claude").mkdir(parents=True)
    (user / ".ssh").mkdir()
    (user / ".ssh" / "id_rsa").write_text("PRIVATE-KEY")
    (ws / "secrets").mkdir(parents=True)
    (ws / "secrets" / "notes.md").write_text("DENIED-NOTES")
    (ws / "AGENTS.md").symlink_to(ws / "secrets" / "notes.md")
    mask = ReadMask(ws, deny=("secrets",), env={"HOME": str(user)})
    out = render(Sources(ws, user_home=user, reads=mask))
    assert "DENIED-NOTES" not in out
    assert "[AGENTS.md skipped: it leads to" in out
    assert "hidden from every tool" in out
    (user / ".claude" / "CLAUDE.md").symlink_to(user / ".ssh" / "id_rsa")
    out = render(Sources(ws, user_home=user, reads=mask))
    assert "PRIVATE-KEY" not in out
    (ws / "AGENTS.md").unlink()
    (ws / "AGENTS.md").symlink_to(ws / "secrets" / ".." / "plain.md")
    (ws / "plain.md").write_text("PLAIN")
    assert "PLAIN" in render(Sources(ws, reads=mask)), "a link inside the workspace is read"
