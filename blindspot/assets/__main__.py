"""``python -m blindspot.assets``: put every offline asset in place, register the metric modules
with ``evaluate`` as ``blindspot/<name>`` (idempotent; canonical names are left alone) and write the
start-up file that keeps evaluate quiet about their cached copies."""

from blindspot.assets import install_perluniprops, install_punkt_tab, install_smollm2, install_wordnet
from blindspot.evaluate_modules import BARE_NAMES, register_modules

if __name__ == "__main__":
    print(f"WordNet for NLTK: {install_wordnet()}")
    print(f"Punkt tables for NLTK: {install_punkt_tab()}")
    print(f"perluniprops for NLTK: {install_perluniprops()}")
    print(f"SmolLM2-135M model folder: {install_smollm2()}")
    written, startup_file = register_modules()
    print(f"metric modules registered with evaluate as blindspot/<name>: {len(written)} (and "
          f"by bare name: {', '.join(BARE_NAMES)})")
    print(f"evaluate's cached-module notice hidden for them by: {startup_file}")
