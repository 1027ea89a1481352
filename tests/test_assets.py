"""The install step's SmolLM2 conversion (``python -m blindspot.assets``): reading the GGUF file
three times instead of five must write the very folder ``make env`` installed, byte for byte (its
hash is part of every cached GPT-PPL score's key)."""

from __future__ import annotations

from pathlib import Path

from blindspot.assets.smollm2 import install_smollm2
from blindspot.models import resolve_model


def test_smollm2_conversion_writes_the_installed_folder_byte_for_byte(tmp_path: Path) -> None:
    installed = Path(resolve_model("smollm2"))
    written = install_smollm2(tmp_path / "smollm2")
    names = sorted(p.name for p in installed.iterdir() if p.is_file())
    assert names == sorted(p.name for p in written.iterdir() if p.is_file())
    assert "model.safetensors" in names and "tokenizer.json" in names
    for name in names:
        assert (written / name).read_bytes() == (installed / name).read_bytes(), name
