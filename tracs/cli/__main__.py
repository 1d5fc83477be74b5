"""``python -m tracs.cli``: the same as the ``tracs`` command."""

import sys

from . import main

sys.exit(main())
