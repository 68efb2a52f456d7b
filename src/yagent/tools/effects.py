"""Which tool calls have external side effects: ONE declarative table and the one classifier.

Contract:
- `EffectTable.classify(spec, args)` says whether a call reaches outside the machine in a way a
  second run would repeat (a push, a publish, a deploy, an HTTP request other than GET, a
  destructive MCP tool) and names the rule that said so. Such calls run through `sideeffect`
  (`tools.effectrun`); every other call runs as before.
- Shell lines (a spec with a `command_arg`) are split by cmdpolicy's bash AST into every command
  they can run — segments, pipelines, substitutions, `sh -c`, wrappers (sudo, env, timeout…), git's
  global options stripped — and each argv is matched against the rules: the rule's `prefix`
  tokens equal the argv's first tokens (a path-qualified command matches by basename) and, when it
  lists `when` options, one of them appears after the prefix (`-X POST`, `--request=POST`,
  `-XPOST`, `-d…`; methods compare case-insensitively). The longest matching prefix wins; at equal
  length a side-effect rule beats an exemption (`effect = false`) — fail closed. A line cmdpolicy
  cannot parse, and a command whose name is known only at run time, count as side-effecting.
- MCP tools are side-effecting unless their annotations say read-only or idempotent; the rule
  name says what they declared: `mcp-destructive`, `mcp-mutating` (declared, not destructive) or
  `mcp-unannotated` (declares nothing: the MCP defaults make it destructive); a NETWORK tool with a
  `method` argument other than GET/HEAD/OPTIONS is side-effecting (`web_fetch` has no such
  argument: it only GETs).
- Every rule carries `match` / `not_match` examples, run through `classify_line` when the table is
  built: a disagreeing example is an `EffectRuleError` naming the rule — a rule never seen to fire
  is not trusted to fire. Configured rules (`[[side_effects]]`) are checked the same way, with the
  built-in ones (a configured rule may take a built-in example over). The built-in table alone is
  checked by its tests (`tests/tools/test_effects.py`), not at every start (`EffectTable.build`):
  the check parses every example (docs/adr/0029-built-in-rule-examples-checked-by-tests.md).
Known limit: a push behind a script, an alias, a Makefile target or a variable is not seen unless
a rule names that entry point (`[[side_effects]] prefix = "./release.sh"`).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from yagent.kernel.confine import cmdpolicy
from yagent.toolspec import Effect, Spec

_PARSER = cmdpolicy.Policy([])  # no rules: used only to enumerate the commands of a line
_METHODS = ("POST", "PUT", "DELETE", "PATCH")
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_KEYS = frozenset({"name", "prefix", "when", "effect", "match", "not_match"})


class EffectRuleError(ValueError):
    """A malformed rule, or one whose examples disagree with the classifier."""


@dataclass(frozen=True, slots=True)
class EffectRule:
    name: str
    prefix: tuple[str, ...]
    when: tuple[tuple[str, ...], ...] = ()  # options, one of which must follow the prefix
    effect: bool = True  # False: an exemption (this prefix is not an external side effect)
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or not self.prefix or any(not t for t in self.prefix):
            raise EffectRuleError(f"side-effect rule {self.name!r}: empty name or prefix token")
        if any(not 1 <= len(option) <= 2 for option in self.when):
            raise EffectRuleError(f"side-effect rule {self.name!r}: `when` entries are OPT [VALUE]")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> EffectRule:
        unknown = sorted(set(data) - _KEYS)
        name = str(data.get("name", ""))
        if unknown:
            raise EffectRuleError(f"side-effect rule {name!r}: unknown keys {unknown}")
        try:
            prefix = tuple(shlex.split(str(data.get("prefix", ""))))
            when = tuple(tuple(shlex.split(str(w))) for w in data.get("when", ()))
        except ValueError as exc:
            raise EffectRuleError(f"side-effect rule {name!r}: {exc}") from None
        effect = data.get("effect", True)
        if not isinstance(effect, bool):
            raise EffectRuleError(f"side-effect rule {name!r}: effect must be true or false")
        match, not_match = data.get("match", ()), data.get("not_match", ())
        if not all(isinstance(x, str) for x in (*match, *not_match)):
            raise EffectRuleError(f"side-effect rule {name!r}: examples must be strings")
        if not match:  # every rule is seen to fire at start-up: its prefix is its own example
            if when:
                raise EffectRuleError(f"side-effect rule {name!r}: with `when`, give `match`")
            match = (shlex.join(prefix),)
        return cls(name, prefix, when, effect, tuple(match), tuple(not_match))

    def fits(self, argv: Sequence[str]) -> bool:
        n = len(self.prefix)
        if len(argv) < n:
            return False
        head = argv[0] if "/" in self.prefix[0] else argv[0].rsplit("/", 1)[-1]
        if (head, *argv[1:n]) != self.prefix:
            return False
        return not self.when or any(_has_option(argv[n:], option) for option in self.when)


def _short_value(token: str, letter: str) -> str | None:
    """In a short-option cluster (`-sSXPUT`), what follows `letter` ('' when it ends the token);
    None when the token is not such a cluster or holds no `letter` after plain flag letters."""
    if not token.startswith("-") or token.startswith("--"):
        return None
    body = token[1:]
    at = body.find(letter)
    if at < 0 or (at and not body[:at].isalpha()):
        return None
    return body[at + 1 :]


def _has_option(rest: Sequence[str], option: tuple[str, ...]) -> bool:
    flag, value = option[0], (option[1].upper() if len(option) == 2 else None)
    short = len(flag) == 2 and flag[0] == "-" and flag[1] != "-"
    for i, token in enumerate(rest):
        if token == "--":
            return False
        after = rest[i + 1].upper() if i + 1 < len(rest) else None
        attached = _short_value(token, flag[1]) if short else None
        if value is None:
            if token == flag or token.startswith(flag + "=") or attached is not None:
                return True
        elif attached is not None:
            if (attached or after or "").upper() == value:
                return True
        elif (token == flag and after == value) or token.upper() == f"{flag}={value}".upper():
            return True
    return False


@dataclass(frozen=True, slots=True)
class Found:
    """A side-effecting call: the deciding rule, what it does, and how to read its result."""

    rule: str
    detail: str
    unsure: Callable[[Any], str] | None = None  # non-empty text: the result leaves it unknown


def shell_outcome_unknown(data: Any) -> str:
    """Why a run_bash result leaves open whether the command's effect happened ('' if not)."""
    if not isinstance(data, Mapping):
        return ""
    receipt, code = data.get("receipt"), data.get("exit_code")
    if receipt in ("timeout", "cancelled"):
        return f"the command was stopped while running ({receipt})"
    if isinstance(code, int) and code < 0:
        return f"the command was killed by a signal (exit code {code})"
    if receipt is None and "pid" in data:
        return "the command runs in the background: its outcome is not known when the call returns"
    return ""


def _arg(args: Any, name: str) -> Any:
    return args.get(name) if isinstance(args, Mapping) else getattr(args, name, None)


class EffectTable:
    """The rules in resolution order, checked against their own examples."""

    def __init__(self, rules: Iterable[EffectRule], *, check: bool = True) -> None:
        self.rules = tuple(rules)
        names = [r.name for r in self.rules]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise EffectRuleError(f"duplicate side-effect rule names: {dupes}")
        self._order = sorted(self.rules, key=lambda r: (-len(r.prefix), not r.effect, r.name))
        for rule in self.rules if check else ():
            self._check(rule)

    @classmethod
    def build(
        cls, configured: Iterable[Mapping[str, Any]] = (), *, builtin: bool = True
    ) -> EffectTable:
        extra = [EffectRule.from_mapping(entry) for entry in configured]
        return cls([*(BUILTIN if builtin else ()), *extra], check=bool(extra))

    def _check(self, rule: EffectRule) -> None:
        for example in rule.match:
            found = self.classify_line(example)
            decided = self._decider(example)
            if decided != rule.name or (found is not None) != rule.effect:
                raise EffectRuleError(
                    f"side-effect rule {rule.name!r}: example {example!r} is decided by "
                    f"{decided or 'no rule'}"
                )
        for example in rule.not_match:
            if self._decider(example) == rule.name:
                raise EffectRuleError(
                    f"side-effect rule {rule.name!r}: not_match example {example!r} matches it"
                )

    def _best(self, argv: Sequence[str]) -> EffectRule | None:
        return next((r for r in self._order if r.fits(argv)), None)

    def _decider(self, line: str) -> str:
        try:
            commands = cmdpolicy.decide_command(_PARSER, line).commands
        except cmdpolicy.CmdPolicyError:
            return ""
        for command in commands:
            rule = self._best(command.argv)
            if rule is not None:
                return rule.name
        return ""

    def classify_line(self, line: str) -> Found | None:
        try:
            commands = cmdpolicy.decide_command(_PARSER, line).commands
        except cmdpolicy.CmdPolicyError as exc:
            return Found("unjudgeable", f"{line} ({exc})", shell_outcome_unknown)
        for command in commands:
            rule = self._best(command.argv)
            if rule is not None and rule.effect:
                return Found(rule.name, " ".join(command.argv), shell_outcome_unknown)
            if rule is None and not command.exact and command.argv[0].startswith(("$", "`")):
                return Found("dynamic-command", " ".join(command.argv), shell_outcome_unknown)
        return None

    def classify(self, spec: Spec, args: Any) -> Found | None:
        if spec.command_arg:
            line = _arg(args, spec.command_arg)
            return self.classify_line(line) if isinstance(line, str) else None
        if spec.external and "mcp" in spec.tags:
            if spec.tags & {"read-only", "idempotent"}:
                return None
            if "unannotated" in spec.tags:
                return Found("mcp-unannotated", spec.name)
            why = "mcp-destructive" if "destructive" in spec.tags else "mcp-mutating"
            return Found(why, spec.name)
        if spec.effect is not Effect.NETWORK:  # only a NETWORK tool's method is read
            return None
        method = _arg(args, "method")
        if isinstance(method, str) and method.upper() not in _SAFE_METHODS:
            return Found("http-method", f"{spec.name} {method.upper()}")
        return None


def _r(
    name: str, prefix: str, *match: str, when: Sequence[str] = (), not_match: Sequence[str] = ()
) -> EffectRule:
    return EffectRule(
        name,
        tuple(prefix.split()),
        tuple(tuple(w.split()) for w in when),
        True,
        match or (prefix,),
        tuple(not_match),
    )


def _methods(*flags: str) -> list[str]:
    return [f"{flag} {method}" for flag in flags for method in _METHODS]


_CURL_DATA = ("-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii")
_CURL_FORM = ("--json", "-F", "--form", "--form-string", "-T", "--upload-file")

BUILTIN: tuple[EffectRule, ...] = (
    _r("git-push", "git push", "git push origin main", "git -C repo push", "cd x && git push -f"),
    _r("git-send-email", "git send-email"),
    *(_r(f"{tool}-publish", f"{tool} publish") for tool in ("npm", "pnpm", "yarn", "poetry")),
    _r("npm-unpublish", "npm unpublish"),
    _r("yarn-npm-publish", "yarn npm publish"),
    _r("cargo-publish", "cargo publish"),
    _r("cargo-yank", "cargo yank"),
    _r("twine-upload", "twine upload", "twine upload dist/*"),
    _r("uv-publish", "uv publish"),
    _r("gem-push", "gem push"),
    _r("mvn-deploy", "mvn deploy"),
    _r("gradle-publish", "gradlew publish", "./gradlew publish"),
    _r("dotnet-nuget-push", "dotnet nuget push"),
    *(_r(f"{tool}-push", f"{tool} push", f"{tool} push img:1") for tool in ("docker", "podman")),
    _r(
        "docker-buildx-push",
        "docker buildx build",
        "docker buildx build --push .",
        when=["--push"],
        not_match=["docker buildx build ."],
    ),
    *(_r(f"helm-{verb}", f"helm {verb}") for verb in ("install", "upgrade", "uninstall", "push")),
    *(
        _r(f"kubectl-{verb}", f"kubectl {verb}")
        for verb in ("apply", "create", "delete", "patch", "replace", "scale", "set", "label")
    ),
    _r("kubectl-rollout-restart", "kubectl rollout restart"),
    _r("kubectl-rollout-undo", "kubectl rollout undo"),
    *(
        _r(f"{tool}-{verb}", f"{tool} {verb}")
        for tool in ("terraform", "tofu")
        for verb in ("apply", "destroy")
    ),
    _r("pulumi-up", "pulumi up"),
    _r("pulumi-destroy", "pulumi destroy"),
    _r("ansible-playbook", "ansible-playbook", "ansible-playbook site.yml"),
    *(
        _r(f"gh-{noun}-{verb}", f"gh {noun} {verb}")
        for noun, verbs in (
            ("pr", ("create", "merge", "close", "comment", "review")),
            ("issue", ("create", "close", "comment")),
            ("release", ("create", "delete", "upload")),
            ("repo", ("create", "delete")),
            ("workflow", ("run",)),
        )
        for verb in verbs
    ),
    _r(
        "gh-api-write",
        "gh api",
        "gh api repos/o/r/issues -f title=x",
        "gh api -X DELETE x",
        when=[*_methods("-X", "--method"), "-f", "-F", "--field", "--raw-field", "--input"],
        not_match=["gh api repos/o/r"],
    ),
    _r("glab-mr-create", "glab mr create"),
    _r("glab-mr-merge", "glab mr merge"),
    *(
        _r(f"{tool}-deploy", f"{tool} deploy")
        for tool in (
            "firebase",
            "netlify",
            "vercel",
            "fly",
            "flyctl",
            "serverless",
            "sls",
            "cdk",
            "sam",
        )
    ),
    *(_r(f"gcloud-{what}-deploy", f"gcloud {what} deploy") for what in ("app", "run", "functions")),
    _r("aws-cloudformation-deploy", "aws cloudformation deploy"),
    _r(
        "curl-write",
        "curl",
        "curl -X POST https://x",
        "curl -sSXPUT https://x",
        "curl --request=delete https://x",
        "curl -d a=1 https://x",
        "curl https://x --json {}",
        when=[*_methods("-X", "--request"), *_CURL_DATA, *_CURL_FORM],
        not_match=["curl https://x", "curl -X GET https://x", "curl -o out https://x"],
    ),
    _r(
        "wget-write",
        "wget",
        "wget --post-data=a https://x",
        "wget --method PUT https://x",
        when=[*_methods("--method"), "--post-data", "--post-file", "--body-data", "--body-file"],
        not_match=["wget https://x"],
    ),
    *(
        _r(f"{tool}-{method.lower()}", f"{tool} {method}", f"{tool} {method} https://x")
        for tool in ("http", "https", "xh")
        for method in _METHODS
    ),
)
