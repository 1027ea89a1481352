"""``python -m blindspot.cli``: the ``blindspot`` command."""

from blindspot.cli import main

main()
