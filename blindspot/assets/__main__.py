"""``python -m blindspot.assets``: put every offline asset in place (idempotent)."""

from blindspot.assets import install_smollm2, install_wordnet

if __name__ == "__main__":
    print(f"WordNet for NLTK: {install_wordnet()}")
    print(f"SmolLM2-135M model folder: {install_smollm2()}")
