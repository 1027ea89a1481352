"""One module per tab of the Space; each has a ``build(context)`` the registry calls."""
