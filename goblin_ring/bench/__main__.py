"""python -m goblin_ring.bench: the same as goblin-ring-bench."""
import sys

from .cli import main

sys.exit(main())
