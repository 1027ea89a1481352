"""blindspot: stress tests that find the blind spots of text-generation evaluation metrics.

The perturbation catalogue lives in :mod:`blindspot.perturbations`, the dataset builders in
:mod:`blindspot.datasets_scripts`; this package holds what they share (parsing, seeding,
noise ratio, file I/O, the offline model registry and the CLI).
"""

from blindspot.quiet import install_log_filters, quiet_cached_module_notice

__version__ = "0.1.0"

# evaluate.load("blindspot/<name>") works offline from the modules cache; evaluate warns on each
# such load that the module "couldn't be found on the Hub". Ours never is: say nothing about it.
quiet_cached_module_notice()
# what Ray and other libraries log that says nothing to our user (blindspot/quiet.py)
install_log_filters()
