"""The architecture gate: `architecture-policy.yaml` made executable.

Guarantees: structure is judged on syntax trees (`ast`), never on lines — every import form counts
(plain, from, relative, nested, under `TYPE_CHECKING`, `importlib.import_module` / `__import__` with
a literal name); a policy that cannot mean what it says (unknown key, disagreeing rule example,
dangling id) is refused outright; exceptions carry a reason, an expiry and a removal plan, and one
that has expired or excuses nothing is itself a violation. Also here: `docsync` (README's kernel
package table vs the code) and `pkgcov` (per-package coverage floor). Importable, so a host
repository reuses the same judgement instead of writing its own.
"""

from yagent.kernel.archcheck.docsync import run_docsync
from yagent.kernel.archcheck.gate import Report, check_tree
from yagent.kernel.archcheck.model import BUILTIN_RULES, Violation
from yagent.kernel.archcheck.pkgcov import run_pkgcov
from yagent.kernel.archcheck.policy import Policy, PolicyError, load_policy, parse_policy

__all__ = [
    "BUILTIN_RULES",
    "Policy",
    "PolicyError",
    "Report",
    "Violation",
    "check_tree",
    "load_policy",
    "parse_policy",
    "run_docsync",
    "run_pkgcov",
]
