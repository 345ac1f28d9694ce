"""`python -m engine.cli …` is `vigil …` without the window."""

import sys

from engine.cli import main

sys.exit(main())
