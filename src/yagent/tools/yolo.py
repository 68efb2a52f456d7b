"""How much of the authorization a run skips: the `-y` / `-Y` level it starts with.

`OFF` asks as the rules say; `YOLO` (`-y`) bypasses every authorization, outside-workspace paths
included; `FULL` (`-Y`) implies `-y`, also removes `ask_user_for_help` and adds the autonomy
instruction. A plain enum on its own so that the command line names the level without loading
the guard that enforces it (`tools.guard`).
"""

from __future__ import annotations

import enum


class Yolo(enum.IntEnum):
    OFF = 0
    YOLO = 1  # -y: every authorization bypassed, outside-workspace paths included
    FULL = 2  # -Y: implies -y; also removes ask_user_for_help and adds the autonomy instruction
