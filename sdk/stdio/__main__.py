"""``python -m domino_arena.sdk.stdio FILE.py:Class``: a Python Bot over the stdio protocol
(see :mod:`.host`)."""

import sys

from domino_arena.sdk.stdio.host import main

sys.exit(main())
