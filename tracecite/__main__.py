"""``python -m tracecite``."""

from tracecite.cli import main

raise SystemExit(main())
