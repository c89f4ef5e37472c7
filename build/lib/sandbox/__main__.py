"""``python -m sandbox``: the same as the ``sandbox`` command."""

import sys

from sandbox.cli import main

sys.exit(main())
