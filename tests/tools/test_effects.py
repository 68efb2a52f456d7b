"""The side-effect table: which calls run through `sideeffect`, and why."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.tools.effects import (
    BUILTIN,
    EffectRule,
    EffectRuleError,
    EffectTable,
    shell_outcome_unknown,
)
from yagent.toolspec import Effect, Spec, Tier
from yagent.toolspec.builtin import BUILTIN as SPECS

TABLE = EffectTable.build()
SPEC = {s.name: s for s in SPECS}


def rule_of(line: str) -> str | None:
    found = TABLE.classify_line(line)
    return None if found is None else found.rule


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("git push origin main", "git-push"),
        ("git -C sub --no-pager push", "git-push"),
        ("/usr/bin/git push", "git-push"),
        ("cd repo && git push --force-with-lease", "git-push"),
        ("echo $(git push)", "git-push"),
        ("sudo -u deploy kubectl apply -f k8s/", "kubectl-apply"),
        ("timeout 60 docker push registry/app:1", "docker-push"),
        ("bash -c 'npm publish --access public'", "npm-publish"),
        ("terraform apply -auto-approve", "terraform-apply"),
        ("gh pr create --fill", "gh-pr-create"),
        ("curl -X POST https://api", "curl-write"),
        ("curl -sSX DELETE https://api", "curl-write"),
        ("curl --request=patch https://api", "curl-write"),
        ("curl -d@body.json https://api", "curl-write"),
        ("curl --data-binary @f https://api", "curl-write"),
        ("wget --method=PUT https://x", "wget-write"),
        ("http POST https://x a=1", "http-post"),
        ("$DEPLOY --prod", "dynamic-command"),
        ("echo 'unclosed", "unjudgeable"),
    ],
)
def test_side_effecting_lines(line: str, rule: str) -> None:
    assert rule_of(line) == rule


@pytest.mark.parametrize(
    "line",
    [
        "git status",
        "git log --oneline",
        "git pull",
        "curl https://example.com",
        "curl -fsSL https://x -o out",
        "curl -X GET https://x",
        "curl https://x -- -d",  # after `--` nothing is an option
        "kubectl get pods",
        "docker build .",
        "npm test",
        "make deploy",  # a known limit: entry points need a configured rule
        "gh api repos/o/r",
        "echo git push",
    ],
)
def test_local_or_read_only_lines(line: str) -> None:
    assert rule_of(line) is None


def test_every_builtin_rule_has_a_unique_name_and_fires_on_its_examples() -> None:
    names = [r.name for r in BUILTIN]
    assert len(names) == len(set(names))
    for rule in BUILTIN:
        assert rule.match, rule.name
        for example in rule.match:
            assert rule_of(example) == rule.name


def test_the_builtin_table_passes_its_own_example_check() -> None:
    """`EffectTable.build()` does not re-check the built-in rules at every start: this does,
    `match` and `not_match` alike (a broken example is an `EffectRuleError` here)."""
    checked = EffectTable(BUILTIN)
    assert [r.name for r in checked.rules] == [r.name for r in EffectTable.build().rules]


WRAPPERS = st.sampled_from(
    ["", "sudo ", "env A=1 ", "timeout 30 ", "nice -n 5 ", "cd x && ", "true; ", "( ", "FOO=1 "]
)
EXAMPLES = st.sampled_from([(r.name, m) for r in BUILTIN for m in r.match])


@given(WRAPPERS, EXAMPLES)
def test_wrapping_a_side_effect_never_hides_it(wrapper: str, example: tuple[str, str]) -> None:
    name, line = example
    text = f"{wrapper}{line}{' )' if wrapper == '( ' else ''}"
    assert rule_of(text) == name


def test_configured_rules_add_entry_points_and_exemptions() -> None:
    table = EffectTable.build(
        [
            {"name": "release", "prefix": "./release.sh", "match": ["./release.sh v1"]},
            {
                "name": "dry-run",
                "prefix": "npm publish --dry-run",
                "effect": False,
                "match": ["npm publish --dry-run"],
            },
            {
                "name": "post-hook",
                "prefix": "hook",
                "when": ["--send"],
                "match": ["hook --send"],
                "not_match": ["hook x"],
            },
        ]
    )
    assert table.classify_line("./release.sh v2") is not None
    assert table.classify_line("npm publish --dry-run") is None  # the longer exemption wins
    assert table.classify_line("npm publish") is not None
    assert table.classify_line("hook --send=now") is not None
    assert table.classify_line("hook x") is None


def test_at_equal_length_the_side_effect_beats_the_exemption() -> None:
    quiet = EffectRule("not-really", ("git", "push"), effect=False)  # no examples to check
    found = EffectTable([*BUILTIN, quiet]).classify_line("git push")
    assert found is not None
    assert found.rule == "git-push"
    # and a configured exemption that could never win is refused, not silently ignored
    with pytest.raises(EffectRuleError, match="decided by git-push"):
        EffectTable.build([{"name": "not-really", "prefix": "git push", "effect": False}])


def test_without_builtin_rules_only_configured_ones_apply() -> None:
    table = EffectTable.build([{"name": "x", "prefix": "deploy"}], builtin=False)
    assert table.classify_line("git push") is None
    assert table.classify_line("deploy now") is not None


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "bad", "prefix": "x", "match": ["y"]}, "decided by no rule"),
        ({"name": "bad", "prefix": "zz", "not_match": ["zz x"]}, "matches it"),
        ({"name": "bad", "prefix": "curl"}, "is decided by bad"),  # it would steal curl-write's
        ({"name": "bad", "prefix": "zz", "when": ["-x"]}, "give `match`"),
        ({"name": "bad", "prefix": "x", "typo": 1}, "unknown keys"),
        ({"name": "bad", "prefix": ""}, "empty name or prefix"),
        ({"name": "bad", "prefix": "x 'y"}, "closing quotation"),
        ({"name": "bad", "prefix": "x", "effect": "yes"}, "true or false"),
        ({"name": "bad", "prefix": "x", "match": [1]}, "strings"),
        ({"name": "bad", "prefix": "x", "when": ["-a b c"], "match": ["x"]}, r"OPT \[VALUE\]"),
        ({"name": "git-push", "prefix": "x"}, "duplicate"),
    ],
)
def test_a_bad_rule_is_refused_by_name(entry: dict[str, object], message: str) -> None:
    with pytest.raises(EffectRuleError, match=message):
        EffectTable.build([entry])


def test_an_exemption_example_must_be_exempted() -> None:
    rule = EffectRule(
        "ok", ("git", "push", "--dry-run"), effect=False, match=("git push --dry-run",)
    )
    assert EffectTable([*BUILTIN, rule]).classify_line("git push --dry-run") is None


def mcp_spec(*tags: str) -> Spec:
    return Spec(
        "srv__tool",
        "a tool",
        {"type": "object"},
        Effect.READ if "read-only" in tags else Effect.WRITE,
        Tier.COLD,
        tags=frozenset({"mcp", "srv", *tags}),
        external=True,
    )


def test_mcp_tools_are_side_effects_unless_read_only_or_idempotent() -> None:
    assert TABLE.classify(mcp_spec("read-only"), {}) is None
    assert TABLE.classify(mcp_spec("idempotent", "destructive"), {}) is None
    destructive = TABLE.classify(mcp_spec("destructive"), {})
    assert destructive is not None
    assert destructive.rule == "mcp-destructive"
    declared = TABLE.classify(mcp_spec("annotated"), {})  # every hint false: mutating
    assert declared is not None
    assert declared.rule == "mcp-mutating"
    plain = TABLE.classify(mcp_spec("unannotated", "destructive"), {})
    assert plain is not None
    assert plain.rule == "mcp-unannotated"


def test_http_methods_other_than_get_are_side_effects() -> None:
    spec = Spec("http_call", "x", {"type": "object"}, Effect.NETWORK, Tier.WARM)
    assert TABLE.classify(spec, {"method": "get"}) is None
    found = TABLE.classify(spec, {"method": "post"})
    assert found is not None
    assert found.detail == "http_call POST"
    # web_fetch only GETs: nothing of it is a side effect
    assert TABLE.classify(SPEC["web_fetch"], {"url": "https://x"}) is None


def test_run_bash_is_classified_by_its_command_model_or_mapping() -> None:
    model = SPEC["run_bash"].model
    assert model is not None
    args = model.model_validate({"command": "git push"})
    found = TABLE.classify(SPEC["run_bash"], args)
    assert found is not None
    assert found.rule == "git-push"
    assert TABLE.classify(SPEC["run_bash"], {"command": "ls"}) is None
    assert TABLE.classify(SPEC["run_bash"], {"command": 3}) is None
    assert TABLE.classify(SPEC["read_file"], {"path": "x"}) is None


@pytest.mark.parametrize(
    ("data", "unknown"),
    [
        ({"receipt": "success", "exit_code": 0}, False),
        ({"receipt": "exit_nonzero", "exit_code": 1}, False),
        ({"receipt": "timeout", "exit_code": None}, True),
        ({"receipt": "cancelled", "exit_code": None}, True),
        ({"receipt": "exit_nonzero", "exit_code": -9}, True),
        ({"pid": 3, "pgid": 3, "log_path": "x"}, True),
        ("not a mapping", False),
    ],
)
def test_which_shell_results_leave_the_outcome_unknown(data: object, unknown: bool) -> None:
    assert bool(shell_outcome_unknown(data)) is unknown
