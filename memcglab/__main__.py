"""``python -m memcglab``: the same as the ``memcglab`` command."""

import sys

from memcglab.cli import main

if __name__ == "__main__":
    sys.exit(main())
