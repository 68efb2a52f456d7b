"""`/model` across providers, typed into a real pty: a model configured under
`[llm.providers.LABEL]` (here Anthropic's wire protocol on a second loopback server) is reached by
its name, completed by Tab; an unknown one is refused with every configured model and provider;
`/model NAME` of `[llm]`'s own model switches back."""

from __future__ import annotations

from pathlib import Path

from tests.cli.ptyterm import CTRL_D, TAB, Term, configure
from tests.cli.test_startup import anthropic_text
from tests.llm.wire import Reply, WireServer, text_frames


def test_model_switches_to_another_provider_and_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    openai_replies = [Reply(events=text_frames("from openai")) for _ in range(4)]
    anthropic_replies = [Reply(events=anthropic_text("from anthropic")) for _ in range(4)]
    with WireServer(openai_replies) as first, WireServer(anthropic_replies) as second:
        extra = f'[llm.providers.anthropic]\nbase_url = "{second.url}"\nmodels = ["claude-test"]\n'
        configure(tmp_path / "home", first.url, extra)
        term = Term(tmp_path / "home", ws)
        try:
            term.ready()
            listed = term.answer("/model")
            assert "configured: m, anthropic/claude-test" in listed
            refused = term.answer("/model gpt-nothing")
            assert "model not changed" in refused
            assert "models are m, anthropic/claude-test" in refused
            assert "providers are openai, anthropic" in refused
            term.send("/model cla" + TAB)  # Tab completes the configured name
            term.wait_for("anthropic/claude-test")
            switched = term.answer("")
            assert "model is now claude-test (anthropic" in switched
            assert "from anthropic" in term.answer("say hi")
            assert "model is now m (openai" in term.answer("/model m")
            assert "from openai" in term.answer("again")
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
        assert second.received  # the task after the switch went to the second provider…
        assert {r.body["model"] for r in second.received} == {"claude-test"}
        assert all(r.path.endswith("/messages") for r in second.received)  # …on its protocol
        assert {r.body["model"] for r in first.received} == {"m"}
        assert "again" in str(first.received[-1].body)  # the task after switching back
