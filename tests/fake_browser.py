"""A person's browser for the OAuth tests: opens the authorization URL and follows its redirects
(to yagent's loopback callback), as a browser would once the person approved.
Used through `$BROWSER` (`python tests/fake_browser.py %s`), which `webbrowser` honours."""

from __future__ import annotations

import sys
import urllib.request

if __name__ == "__main__":
    with urllib.request.urlopen(sys.argv[1], timeout=30) as answer:
        answer.read()
