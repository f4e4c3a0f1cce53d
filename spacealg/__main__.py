"""``python -m spacealg`` is the ``spacealg`` command."""

import sys

from spacealg.cli import main

sys.exit(main())
