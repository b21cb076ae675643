"""``python -m pmask`` runs the command line."""
import sys

from pmask.cli import main

sys.exit(main())
