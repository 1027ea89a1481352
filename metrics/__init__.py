"""The metric modules, one ``evaluate`` module folder each (``<name>/<name>.py`` and its card).

This folder installs as package data of ``blindspot.metrics`` so the modules can be registered
with ``evaluate`` as ``blindspot/<name>`` (:mod:`blindspot.evaluate_modules`); the scripts are loaded by
``evaluate.load``, never imported from here.
"""
