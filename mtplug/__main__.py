"""``python -m mtplug``: the same as the ``mtplug`` command."""

import sys

from .cli import main

sys.exit(main())
