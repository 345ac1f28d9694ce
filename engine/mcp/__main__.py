"""`python -m engine.mcp [--http PORT] [--approve …] [--url URL] [--headed]` — the same as `vigil mcp`."""

import sys

from engine.mcp.cli import main

sys.exit(main())
