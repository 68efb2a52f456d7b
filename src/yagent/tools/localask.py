"""The one-time question before the browser or `web_fetch` reaches a local service: "open
127.0.0.1:5173 for this project? [y]es / [a]lways / [n]o".

Contract:
- `Openings` is the session's netguard opening: what `[network] allow_local`, `--allow-local` and
  the person's remembered answers (`Settings.local_openings`) open, plus what the person opens
  while it runs (`open`). It IS a `netguard.Allow`, so the tools judge every request (redirects
  and page sub-requests included) against what is open at that moment.
- `LocalOpeningStage` judges a call whose spec names a `url_arg`: a URL whose host is a loopback
  or private address, or a loopback / local-network name (`localhost`, `*.local`…), on a port not
  open yet, is a question (PROMPT) whose reason names the `host:port`, and how to open it without
  a person (`--allow-local`, `[network] allow_local`) — a run with nobody to answer refuses with
  that reason. Under `-y`/`-Y` it is not asked and nothing opens (a local opening is the person's
  own word: question, flag or key), so netguard refuses with its reason. Cloud metadata,
  link-local and every other address class are never asked about and never opened: netguard
  refuses them whatever anyone answers. A URL netguard cannot read is left to netguard.
- A name that only resolves to a local address (`devbox` → 10.0.0.5) is not asked about: the
  fetch is refused by netguard, whose reason says how to open it.
Leaves to the host: putting the question (the adapter, `opening` in the question's payload),
applying the answer (`open`, and `Settings.remember_local_opening` for "always").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from yagent.kernel.confine import netguard
from yagent.kernel.judge.invoke import Call, Verdict
from yagent.tools.localnet import LOOPBACK_HOSTS, LocalNetError, parse_entry
from yagent.tools.toolview import ToolView
from yagent.tools.yolo import Yolo

STAGE = "local_network"


@dataclass(frozen=True, slots=True)
class Openings(netguard.Allow):
    """netguard's opening, plus the `host:port` entries opened while the session runs."""

    added: list[netguard.Allow] = field(default_factory=list, compare=False)

    def opens(self, host: str, port: int) -> frozenset[netguard.AddrClass]:
        found = set(netguard.Allow.opens(self, host, port))
        for extra in self.added:
            found |= extra.opens(host, port)
        return frozenset(found)

    def open(self, entry: str) -> None:
        """Open one `host:port` (a `LocalNetError` when it is not an openable local service)."""
        self.added.append(netguard.Allow(hosts=frozenset(parse_entry(entry))))


def local_target(url: str) -> tuple[str, netguard.Target, netguard.AddrClass] | None:
    """The `host:port` entry, target and class of a URL aimed at a loopback or private service;
    None for anything else (public, metadata, link-local, unreadable: netguard's to refuse)."""
    try:
        target = netguard.split_url(url)
    except netguard.BlockedError:
        return None
    if target.ip is not None:
        found = netguard.classify(target.ip)
        cls = found.cls if found is not None else None
    else:
        cls = netguard.classify_name(target.host)
    if cls not in netguard.OPENABLE or cls is None:
        return None
    host = f"[{target.ip}]" if target.ip is not None and target.ip.version == 6 else target.host
    return f"{host}:{target.port}", target, cls


class LocalOpeningStage:
    name = STAGE

    def __init__(self, surface: ToolView, openings: Openings) -> None:
        self._surface = surface
        self._openings = openings

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        url = call.args.get(spec.url_arg) if spec is not None and spec.url_arg else None
        found = local_target(url) if isinstance(url, str) else None
        if found is None or self._surface.guard.yolo >= Yolo.YOLO:
            return Verdict.allow(self.name)
        entry, target, cls = found
        if cls in self._openings.opens(target.host, target.port):
            return Verdict.allow(self.name)
        try:
            parse_entry(entry)
        except LocalNetError:
            return Verdict.allow(self.name)  # nothing could open it: netguard refuses
        return Verdict.prompt(
            f"open {entry} for this project? {call.tool} asks for {url}, a {cls} service "
            f"(without a person to answer: --allow-local {entry} for a run, or [network] "
            f'allow_local = ["{entry}"])',
            stage=self.name,
        )


def opening_of(verdict: Verdict, call: Call, surface: ToolView) -> str:
    """What answering yes to a local-opening question opens, as an `allow_local` entry ("" for
    any other question): the port on every loopback name (`localhost`, `127.0.0.1`, `[::1]`:
    the page and its requests may spell it either way) or that one private `host:port`."""
    if verdict.stage != STAGE:
        return ""
    spec = surface.spec(call.tool)
    url = call.args.get(spec.url_arg) if spec is not None and spec.url_arg else None
    found = local_target(url) if isinstance(url, str) else None
    if found is None:
        return ""
    entry, target, _ = found
    return str(target.port) if entry.rsplit(":", 1)[0] in LOOPBACK_HOSTS else entry
