"""``python -m server``: the same as ``klondike-race serve``."""

from .cli import main

raise SystemExit(main())
