"""``python -m boulanger``: the ``boulanger`` command (:mod:`.cli`)."""

import sys

from .cli import main

sys.exit(main())
