"""The kernel-namespace provider on bubblewrap (`bwrap`, Debian package `bubblewrap`).

Guarantees, for every run (`command` builds the argv; the order of mounts matters and is fixed):
- Every namespace unshared (`--unshare-all`), network included unless the program's egress mode
  is `UNRESTRICTED` (`--share-net` only then — a proxy cannot be forced on a shared network, so
  `PROXY` keeps the network unshared: the strict side). All capabilities dropped (`--cap-drop
  ALL`: as root, bwrap would otherwise keep them and the program could remount its way out;
  under `limits` as root, `identity.CAPS` stay, in the mapped user namespace only),
  `--new-session` (no terminal injection), `--die-with-parent`.
- The host root read-only (`--ro-bind / /`), fresh `/dev` and `/proc`, a private empty `/tmp` and
  `/run` (host sockets there — docker, dbus, agents — are out of reach). Then, ordered by
  `mounts.plan` so that the rule on the deepest path wins: each `hidden` host path (secrets,
  other people's homes, the host's own state) masked — a directory by an empty read-only tmpfs,
  a file by `/dev/null` — checked again at every run (created since: hidden too); the
  `readable` host paths (an interpreter or tool under a masked or hidden directory; a file or a
  directory) bound back read-only; the workspace writable at its own path (shown even inside a
  hidden directory; a hidden path inside it stays hidden); then each protected path read-only
  again: the `protected` paths relative to the workspace root (`.git` by default; the host adds
  its own configuration directory) and every entry named like one of `protected_names` at any
  depth, any case (nested repositories' `.git` directories or gitfiles), found at every run by
  `mounts.find_named` (bounded: more than `mounts.WALK_LIMIT` directories is a `SetupError`;
  `shallow` directory names are looked into two levels only). A protected root path that does
  not exist is masked by an empty read-only directory so the program cannot create it (bwrap
  leaves that empty directory behind on the host); a protected root path that is a symbolic
  link is refused; a nested one is protected at its target when that lies in the workspace.
- `workspace_writable=False` binds the workspace read-only; only the `writable` paths, bound
  after it (still before the protected ones, which stay read-only), can then be written — how a
  host confines a worker to its declared areas. A writable path is taken literally: it must
  exist, be a file or a directory, have no symbolic link anywhere in it, and not be or lie in a
  protected path (nor, inside the workspace, in an entry with a protected name, any case) — it
  would be the deeper bind and win (refused: `UnavailableError`). A missing protected path below
  a read-only workspace needs no mask.
- The program's process tree dies with the run: bwrap runs in its own process group, which is
  killed on timeout and cancellation; the sandbox's pid namespace dies with bwrap.
- A sandbox bwrap could not build is a `SetupError`, never an exit code (told apart through
  bwrap's `--json-status-fd`: a run that really happened reports its exit code there).
- `proxy_dir` (optional): a host directory holding an egress proxy's unix socket. It is bound
  read-only into a program whose egress mode is `PROXY` — and only into such a program — while
  the network stays unshared, so that socket is the one way out. It must lie below `/tmp` or
  `/run` (which every sandbox masks): anywhere else the read-only root would already show the
  socket to every sandboxed program, `DENIED` ones included. What the proxy lets through is the
  host's business; this provider only decides who can reach it.
- `limits` (optional, `limits.Limits`): every program starts under `prlimit` with those bounds,
  and `/tmp` and `/run` are tmpfs of at most `memory_mb` (`bounds`). As root, programs also run as
  the mapped non-root user of one user namespace per provider (`identity`), so the process limit
  holds and counts this provider's programs together (`supervision()` polls that count); other
  users' bwrap makes its own user namespace per run, so there it counts per run.
Declares: level `NAMESPACES`; enforces egress `DENIED` (and proves it: `verify_egress`).
Known limits: the root is readable except what the host hides (a secret the host did not
name is readable inside); a nested protected entry the program creates during a run is writable
until the next run; unix sockets outside `/tmp` and `/run` stay connectable; the kernel is
shared (a kernel exploit escapes — that is what `HARDWARE` is for).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

import anyio.to_thread

from yagent.kernel.confine.sandbox import bwrappaths, mounts, process, provider
from yagent.kernel.confine.sandbox.bounds import Bounds
from yagent.kernel.confine.sandbox.errors import SetupError, UnavailableError
from yagent.kernel.confine.sandbox.levels import EgressMode, Level
from yagent.kernel.confine.sandbox.limits import Limits, Supervision
from yagent.kernel.confine.sandbox.provider import Program, Result

DEFAULT_PROTECTED = (".git",)
PROBE_TIMEOUT = 30.0
_RUN = Path("/run")


class BwrapProvider:
    """Runs programs in a bubblewrap sandbox confined to one writable workspace."""

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        protected: Iterable[str] = DEFAULT_PROTECTED,
        workspace_writable: bool = True,
        writable: Iterable[str | os.PathLike[str]] = (),
        readable: Iterable[str | os.PathLike[str]] = (),
        hidden: Iterable[str | os.PathLike[str]] = (),
        protected_names: Iterable[str] = (),
        shallow: Iterable[str] = (),
        proxy_dir: str | os.PathLike[str] | None = None,
        limits: Limits | None = None,
        name: str = "bwrap",
        executable: str | None = None,
    ) -> None:
        found = executable or shutil.which("bwrap")
        if not found:
            raise UnavailableError(
                "bubblewrap is not installed (no `bwrap` on PATH); on Debian: "
                "apt-get install bubblewrap"
            )
        self._bwrap = found
        self._name = name
        self._workspace = bwrappaths.directory(workspace, "workspace")
        self._workspace_writable = workspace_writable
        self._writable = tuple(bwrappaths.area(extra) for extra in writable)
        self._readable = tuple(bwrappaths.shown(extra) for extra in readable)
        self._hidden = tuple(Path(os.path.abspath(path)) for path in hidden)
        self._names = tuple(protected_names)
        self._shallow = tuple(shallow)
        self._proxy_dir = None if proxy_dir is None else bwrappaths.masked_directory(proxy_dir)
        self._protected = tuple(bwrappaths.relative(rel) for rel in protected)
        for extra in self._writable:
            bwrappaths.not_protected(extra, self._workspace, self._protected, self._names)
        self._bounds = Bounds.of(limits)

    @property
    def name(self) -> str:
        return self._name

    @property
    def level(self) -> Level:
        return Level.NAMESPACES

    @property
    def workspace(self) -> Path:
        return self._workspace

    def egress(self) -> EgressMode:
        """Network is unshared unless a program asks for unrestricted egress."""
        return EgressMode.DENIED

    def command(self, program: Program, *, status_fd: int | None = None) -> list[str]:
        """The full bwrap argv for `program`. Blocking: it looks at the filesystem (hidden paths,
        protected entries at any depth) afresh at every call."""
        bounds = self._bounds
        argv = [*bounds.entry(), self._bwrap, *bounds.unshare()]
        if program.egress is EgressMode.UNRESTRICTED:
            argv.append("--share-net")
        argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", *bounds.caps()]
        argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        argv += [*bounds.tmpfs_size(), "--tmpfs", "/tmp", *bounds.tmpfs_size(), "--tmpfs", "/run"]
        argv += mounts.plan(self._mounts(program), (Path("/tmp"), _RUN))
        if status_fd is not None:
            argv += ["--json-status-fd", str(status_fd)]
        argv += ["--chdir", self._cwd(program), "--", *bounds.prlimit, *program.argv]
        return argv

    def wrap(self, argv: Sequence[str], *, egress: EgressMode = EgressMode.DENIED) -> list[str]:
        """`argv` prefixed to run in this sandbox, for hosts that spawn the process themselves
        (a launcher): same confinement as `run`, but the caller owns the process and its kill."""
        return self.command(Program(argv, egress=egress))

    async def run(self, program: Program) -> Result:
        read_end, write_end = os.pipe()
        try:
            build = functools.partial(self.command, program, status_fd=write_end)
            argv = await anyio.to_thread.run_sync(build)  # the walk stays off the event loop
            try:
                done = await process.run_process(
                    argv,
                    cwd=str(self._workspace),
                    env=self.program_env(program.env),
                    deadline=program.timeout,
                    limit=provider.MAX_OUTPUT_BYTES,
                    pass_fds=(write_end,),
                )
            except OSError as exc:
                raise UnavailableError(f"could not start bwrap: {exc}") from exc
            os.close(write_end)
            write_end = -1
            status = _read_status(read_end)
        finally:
            for fd in (read_end, write_end):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
        if not done.timed_out and "exit-code" not in status:
            raise SetupError(
                "bwrap could not build the sandbox", done.output.decode(errors="replace")
            )
        return Result(
            exit_code=done.exit_code,
            output=done.output,
            timed_out=done.timed_out,
            truncated=done.truncated,
            dropped=done.dropped,
            provider=self._name,
        )

    def probe(self) -> None:
        """Check that bwrap can build this sandbox here; raises `UnavailableError` with why.

        Blocking (it runs bwrap once): call it at start-up or from a worker thread.
        """
        self._probe(["true"])

    def verify_egress(self) -> EgressMode:
        """Prove the network isolation: list the interfaces a sandboxed program sees.

        Only a loopback interface ⇒ `DENIED` is proven; anything more ⇒ `UNRESTRICTED` (the
        evidence says the network is reachable). Blocking, like `probe`.
        """
        listing = self._probe(["cat", "/proc/net/dev"])
        names = {line.split(":", 1)[0].strip() for line in listing.splitlines() if ":" in line}
        return EgressMode.DENIED if names <= {"lo"} else EgressMode.UNRESTRICTED

    def _probe(self, argv: Sequence[str]) -> str:
        command = self.command(Program(argv, egress=EgressMode.DENIED))
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                timeout=PROBE_TIMEOUT,
                cwd=str(self._workspace),
                env={},
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UnavailableError(f"bwrap could not be run: {exc}") from exc
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip()
            raise UnavailableError(
                f"bwrap cannot build a sandbox here (exit {done.returncode}): {detail}"
            )
        return done.stdout.decode(errors="replace")

    # -- resource limits (see `bounds`) --------------------------------------------------------
    @property
    def limits(self) -> Limits | None:
        """The limits in force for every program of this sandbox (None: unbounded)."""
        return self._bounds.limits

    def supervision(self) -> Supervision | None:
        """What a host polls during a run: the limits and, as root, the sandbox's task count."""
        return self._bounds.supervision()

    def program_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment a program gets here (as root: git told the workspace is safe)."""
        return self._bounds.program_env(env)

    def _mounts(self, program: Program) -> list[mounts.Mount]:
        """Every rule below the base masks; `mounts.plan` orders them (deepest wins)."""
        found = [m for m in map(mounts.hide, self._hidden) if m is not None]
        hidden = [m.path for m in found]
        ws = self._workspace
        # inside the workspace or a writable area: shown already (and writable, which wins)
        areas = (ws, *self._writable)
        found += [mounts.show(p) for p in self._readable if not bwrappaths.inside(p, areas)]
        if program.egress is EgressMode.PROXY and self._proxy_dir is not None:
            found.append(mounts.show(self._proxy_dir))
        if program.egress is EgressMode.UNRESTRICTED:
            found += [mounts.show(p) for p in bwrappaths.resolver_paths()]
        bind = "--bind" if self._workspace_writable else "--ro-bind"
        found.append(mounts.Mount(ws, mounts.Rank.BIND, (bind, str(ws), str(ws))))
        for extra in self._writable:
            found.append(mounts.Mount(extra, mounts.Rank.BIND, ("--bind", str(extra), str(extra))))
        for rel in self._protected:
            found += self._protect(rel)
        if self._names:
            nested = mounts.find_named(ws, self._names, shallow=self._shallow)
            # one under a hidden path stays hidden: binding it would show it again
            kept = [p for p in nested if not bwrappaths.inside(p, hidden)]
            found += [m for m in map(self._protect_nested, kept) if m is not None]
        return found

    def _protect(self, rel: PurePosixPath) -> list[mounts.Mount]:
        path = self._workspace / rel
        if path.is_symlink():
            raise SetupError(f"protected path {str(path)!r} is a symbolic link; refusing to guess")
        if path.exists():
            return [mounts.Mount(path, mounts.Rank.PROTECT, ("--ro-bind", str(path), str(path)))]
        if not self._workspace_writable and not any(path.is_relative_to(w) for w in self._writable):
            return []  # read-only there: nothing can create it (and bwrap could not mask it)
        masked = ("--tmpfs", str(path), "--remount-ro", str(path))
        return [mounts.Mount(path, mounts.Rank.PROTECT, masked)]

    def _protect_nested(self, path: Path) -> mounts.Mount | None:
        """A nested protected entry read-only; a link to it protects its target in the
        workspace (outside, the read-only root or a hide already covers it)."""
        target = path.resolve() if path.is_symlink() else path
        if not target.exists() or not target.is_relative_to(self._workspace):
            return None
        return mounts.Mount(target, mounts.Rank.PROTECT, ("--ro-bind", str(target), str(target)))

    def _cwd(self, program: Program) -> str:
        if not program.cwd:
            return str(self._workspace)
        return os.path.normpath(self._workspace / program.cwd)


def _read_status(fd: int) -> dict[str, object]:
    """bwrap's JSON status records, merged (the writer has exited: never blocks)."""
    os.set_blocking(fd, False)
    chunks = []
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    merged: dict[str, object] = {}
    decoder = json.JSONDecoder()
    text, pos = b"".join(chunks).decode(errors="replace"), 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        try:
            record, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        if isinstance(record, dict):
            merged.update(record)
    return merged
