"""``python3 <plugin root>/store ARGS`` runs the baton CLI (same as ``bin/baton``)."""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a directory, this file's folder is sys.path[0]; the package needs its parent instead.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from store.cli.main import main  # noqa: E402

sys.exit(main())
