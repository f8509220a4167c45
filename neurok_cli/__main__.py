"""``python -m neurok_cli`` runs the command line."""

from .cli import main

main()
