"""netguard name layer: one strict reading of a URL's host, judged before any resolution.

Guarantees:
- Only absolute http/https URLs with an authority are read; anything else (file:, gopher:, ftp:,
  ws:, data:, scheme-relative or relative URLs) is a SchemeBlockedError.
- A URL that different parsers could read differently is refused rather than guessed at
  (URLBlockedError): control characters or spaces anywhere, backslashes, userinfo (`good@evil`),
  percent-encoded hosts, IPv6 zone ids, empty labels, malformed ports.
- The host is canonicalised the way browsers do (NFKC, ideographic full stops `。` as dots, IDNA,
  lower case, one trailing dot dropped) and then judged in that form.
- A host whose last label is numeric is an IPv4 spelling (WHATWG / inet_aton rules: decimal,
  octal, hex, 1-4 parts). Only the canonical dotted quad is accepted as a literal; every other
  spelling (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`) is a NameBlockedError — the spelling is
  the trick, whatever address it decodes to.
- `classify_name` gives the built-in class of a name: cloud metadata names, localhost and
  `*.localhost`, local-network suffixes (`*.local`, `*.internal`, ...).
Leaves to the caller: which classes are opened (Allow), extension lists (Policy), resolution.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address

from yagent.kernel.confine.netguard.addresses import AddrClass, IPAddress
from yagent.kernel.confine.netguard.errors import (
    NameBlockedError,
    Phase,
    SchemeBlockedError,
    URLBlockedError,
)

SCHEMES = {"http": 80, "https": 443}
MAX_URL = 16384

METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
LOCALHOST_SUFFIXES = ("localhost",)
LOCAL_NETWORK_SUFFIXES = (
    "local",
    "internal",
    "intranet",
    "lan",
    "home",
    "home.arpa",
    "corp",
    "localdomain",
    "private",
)

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_NAME_CHARS = re.compile(r"[a-z0-9_-]+")
_NUMERIC_PART = re.compile(r"0x[0-9a-f]*|[0-9]+")
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


@dataclass(frozen=True, slots=True)
class Target:
    """One canonical host to judge: `ip` is set when the host is an address literal."""

    scheme: str
    host: str
    port: int
    ip: IPAddress | None = None


def split_url(url: str, *, phase: Phase = Phase.CHECK) -> Target:
    """Read `url` strictly into a Target, or raise the BlockedError that says why not."""
    if not isinstance(url, str):
        raise URLBlockedError("URL is not a string", target=repr(url), phase=phase)
    if len(url) > MAX_URL:
        raise URLBlockedError("URL too long", target=url[:80], phase=phase)
    if any(ch <= " " or ch == "\x7f" or ch == "\\" for ch in url):
        raise URLBlockedError(
            "control character, space or backslash in URL", target=url, phase=phase
        )
    m = _SCHEME.match(url)
    if m is None:
        raise SchemeBlockedError("no scheme (relative URL)", target=url, phase=phase)
    scheme = m.group()[:-1].lower()
    if scheme not in SCHEMES:
        raise SchemeBlockedError(f"scheme {scheme!r} is not http or https", target=url, phase=phase)
    rest = url[m.end() :]
    if not rest.startswith("//"):
        raise URLBlockedError("no authority after the scheme", target=url, phase=phase)
    authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
    if "@" in authority:
        raise URLBlockedError(
            "userinfo in URL (parsers disagree where it ends)", target=url, phase=phase
        )
    raw_host, port = _split_port(authority, url, SCHEMES[scheme], phase)
    host, ip = canonical_host(raw_host, bracketed=raw_host.startswith("["), phase=phase)
    return Target(scheme, host, port, ip)


def dial_target(host: str, port: int, *, phase: Phase = Phase.CONNECT) -> Target:
    """The Target for a dial to (host, port) as a transport sees it (IPv6 without brackets)."""
    bare_v6 = ":" in host and not host.startswith("[")
    name, ip = canonical_host(
        f"[{host}]" if bare_v6 else host, bracketed=bare_v6 or host.startswith("["), phase=phase
    )
    return Target("", name, port, ip)


def _split_port(authority: str, url: str, default: int, phase: Phase) -> tuple[str, int]:
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise URLBlockedError("unclosed IPv6 bracket", target=url, phase=phase)
        host, tail = authority[: end + 1], authority[end + 1 :]
        if tail and not tail.startswith(":"):
            raise URLBlockedError("junk after IPv6 literal", target=url, phase=phase)
        port_text = tail[1:] if tail else None
    elif ":" in authority:
        host, port_text = authority.rsplit(":", 1)
    else:
        host, port_text = authority, None
    if not host:
        raise URLBlockedError("empty host", target=url, phase=phase)
    if port_text is None:
        return host, default
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise URLBlockedError(f"bad port {port_text!r}", target=url, phase=phase)
    return host, int(port_text)


def canonical_host(
    raw: str, *, bracketed: bool, phase: Phase = Phase.CHECK
) -> tuple[str, IPAddress | None]:
    """Canonical (host, ip) for a raw host; raises URLBlockedError / NameBlockedError."""
    if "%" in raw:
        raise URLBlockedError("percent-encoding or zone id in host", target=raw, phase=phase)
    if bracketed:
        try:
            v6 = IPv6Address(raw[1:-1] if raw.startswith("[") and raw.endswith("]") else raw)
        except ValueError as exc:
            raise URLBlockedError("malformed IPv6 literal", target=raw, phase=phase) from exc
        return v6.compressed, v6
    host = unicodedata.normalize("NFKC", raw).translate(_DOTS).lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError as exc:
            raise URLBlockedError("host is not valid IDNA", target=raw, phase=phase) from exc
    host = host.removesuffix(".")
    labels = host.split(".")
    if len(host) > 253 or any(not label or len(label) > 63 for label in labels):
        raise URLBlockedError("empty or over-long label in host", target=raw, phase=phase)
    if not all(_NAME_CHARS.fullmatch(label) for label in labels):
        raise URLBlockedError("character not allowed in a host name", target=raw, phase=phase)
    if not all(_punycode_ok(label) for label in labels):
        raise URLBlockedError("invalid punycode label in host", target=raw, phase=phase)
    if _NUMERIC_PART.fullmatch(labels[-1]):
        v4 = ipv4_spelling(labels)
        if v4 is not None and str(v4) == host:
            return host, v4
        decoded = f" (reads as {v4})" if v4 is not None else ""
        raise NameBlockedError(f"numeric host spelling{decoded}", target=raw, phase=phase)
    return host, None


def _punycode_ok(label: str) -> bool:
    if not label.startswith("xn--"):
        return True
    try:
        decoded = label[4:].encode("ascii").decode("punycode")
        return not decoded.isascii() and decoded.encode("idna").decode("ascii") == label
    except UnicodeError:
        return False


def ipv4_spelling(labels: list[str]) -> IPv4Address | None:
    """Decode an inet_aton / WHATWG IPv4 spelling (1-4 parts, dec/oct/hex); None if invalid."""
    if len(labels) > 4:
        return None
    values: list[int] = []
    for part in labels:
        if not _NUMERIC_PART.fullmatch(part):
            return None
        if part.startswith("0x"):
            values.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if set(part) & {"8", "9"}:
                return None
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for i, v in enumerate(head):
        number += v << (8 * (3 - i))
    return IPv4Address(number)


def classify_name(host: str) -> AddrClass | None:
    """Built-in class of a canonical host name (not an address literal), None if ordinary."""
    if host in METADATA_NAMES:
        return AddrClass.METADATA
    if _has_suffix(host, LOCALHOST_SUFFIXES):
        return AddrClass.LOOPBACK
    if _has_suffix(host, LOCAL_NETWORK_SUFFIXES):
        return AddrClass.PRIVATE
    return None


def _has_suffix(host: str, suffixes: tuple[str, ...]) -> bool:
    return any(host == s or host.endswith("." + s) for s in suffixes)
