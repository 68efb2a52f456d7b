"""`python -m yagent.kernel.archcheck` runs the architecture gate (see `cli`)."""

import sys

from yagent.kernel.archcheck.cli import main

sys.exit(main())
