"""``python -m pmask`` runs the command line (as the ``pmask`` executable does: :func:`pmask.cli.console`)."""
from pmask.cli import console

console()
