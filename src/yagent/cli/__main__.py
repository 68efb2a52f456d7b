"""`python -m yagent.cli` runs the `yagent` command."""

import sys

from yagent.cli import main

sys.exit(main())
