"""Fixture trees for the architecture gate: a tiny repository written into tmp_path per test."""

from __future__ import annotations

import copy
import datetime as dt
import textwrap
from pathlib import Path
from typing import Any

import yaml

from yagent.kernel.archcheck import Report, check_tree, parse_policy

TODAY = dt.date(2030, 6, 15)

BASE_FILES: dict[str, str] = {
    "src/pkg/__init__.py": '"""top."""\n',
    "src/pkg/app/__init__.py": "",
    "src/pkg/app/main.py": "X = 1\n",
    "src/pkg/core/__init__.py": "",
    "src/pkg/core/x.py": "import os\n",
    "src/pkg/kernel/__init__.py": "",
    "src/pkg/kernel/k.py": "import json\n",
}

BASE_POLICY: dict[str, Any] = {
    "version": 1,
    "source_root": "src",
    "modules": [
        {"id": "top", "roots": ["src/pkg/__init__.py"], "requires": [], "owner": "t"},
        {"id": "app", "roots": ["src/pkg/app"], "requires": ["core", "kernel"], "owner": "t"},
        {"id": "core", "roots": ["src/pkg/core"], "requires": ["kernel"], "owner": "t"},
        {"id": "kernel", "roots": ["src/pkg/kernel"], "requires": [], "owner": "t"},
    ],
    "kernel": {"module": "kernel", "forbid_outside": True},
}


def policy_dict(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE_POLICY)
    data.update(changes)
    return data


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def make_repo(
    root: Path, files: dict[str, str | None] | None = None, policy: dict[str, Any] | None = None
) -> Path:
    """Write the base tree plus `files` (a None value deletes a base file) and the policy."""
    merged = dict(BASE_FILES)
    for rel, text in (files or {}).items():
        if text is None:
            merged.pop(rel, None)
        else:
            merged[rel] = text
    write_tree(root, merged)
    (root / "architecture-policy.yaml").write_text(
        yaml.safe_dump(policy if policy is not None else BASE_POLICY, sort_keys=False),
        encoding="utf-8",
    )
    return root


def judge(
    root: Path,
    files: dict[str, str | None] | None = None,
    policy: dict[str, Any] | None = None,
    today: dt.date = TODAY,
) -> Report:
    make_repo(root, files, policy)
    data = policy if policy is not None else BASE_POLICY
    return check_tree(root, parse_policy(copy.deepcopy(data)), today=today)


def rules_of(report: Report) -> list[str]:
    return [v.rule for v in report.violations]
