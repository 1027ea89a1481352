"""Tiny randomly initialised checkpoints of the trained metrics' model kinds, built offline.

No COMET, UniEval, NLI or BLEURT weights exist without the Hub. These builders write small random
models in each metric's own checkpoint layout, with a real tokenizer from the offline models
(MiniLM's WordPiece, SmolLM2's BPE), so that the real loading and scoring code runs end to end in
tests and examples. Their scores mean nothing; only what holds for any weights can be checked
on them (shapes, ranges, determinism, parity with a direct computation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from blindspot.models import resolve_model
from blindspot.scorers.comet_score import import_comet

#: small enough to build in about a second, big enough to have every code path
_TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
         "intermediate_size": 64}


def _minilm_tokenizer() -> Any:
    from transformers import AutoTokenizer


    return AutoTokenizer.from_pretrained(resolve_model("minilm"))


def tiny_nli(folder: str | Path, label_order: str = "e,n,c", seed: int = 0) -> str:
    """A 3-class BERT sequence classifier whose ``id2label`` follows ``label_order``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    names = {"e": "ENTAILMENT", "n": "NEUTRAL", "c": "CONTRADICTION"}
    id2label = {i: names[x.strip()] for i, x in enumerate(label_order.split(","))}
    tokenizer = _minilm_tokenizer()
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, num_labels=3, id2label=id2label,
                        label2id={v: k for k, v in id2label.items()}, initializer_range=0.5,
                        **_TINY)
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def tiny_t5(folder: str | Path, seed: int = 0) -> str:
    """A 1-layer T5 with SmolLM2's tokenizer (which has "Yes" and "No" tokens), as UniEval's."""
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration


    tokenizer = AutoTokenizer.from_pretrained(resolve_model("smollm2"))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    pad = tokenizer.pad_token_id
    torch.manual_seed(seed)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=16, d_ff=64, num_layers=1,
                      num_decoder_layers=1, num_heads=2, pad_token_id=pad, eos_token_id=pad,
                      decoder_start_token_id=pad)
    T5ForConditionalGeneration(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def tiny_bleurt(folder: str | Path, seed: int = 0) -> str:
    """A bleurt-pytorch regression model (one output) with MiniLM's tokenizer."""
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification

    tokenizer = _minilm_tokenizer()
    torch.manual_seed(seed)
    config = BleurtConfig(vocab_size=tokenizer.vocab_size, num_labels=1, initializer_range=0.5,
                          **_TINY)
    BleurtForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def tiny_comet(folder: str | Path, reference_free: bool = False, seed: int = 0) -> str:
    """A COMET model folder (``hparams.yaml`` + ``checkpoints/model.ckpt``, as released ones)
    on a tiny BERT encoder saved inside it: a ``RegressionMetric`` (src, mt, ref) or, with
    ``reference_free``, a ``ReferencelessRegression`` (src, mt). Loads with
    ``comet.load_from_checkpoint`` and needs no download (the encoder is a local folder)."""
    import torch
    from transformers import BertConfig, BertModel

    import_comet()
    from comet.models import ReferencelessRegression, RegressionMetric

    root = Path(folder)
    encoder = root / "encoder"
    tokenizer = _minilm_tokenizer()
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size, **_TINY), add_pooling_layer=False
              ).save_pretrained(encoder)
    tokenizer.save_pretrained(encoder)
    cls, identifier = ((ReferencelessRegression, "referenceless_regression_metric")
                       if reference_free else (RegressionMetric, "regression_metric"))
    model = cls(encoder_model="BERT", pretrained_model=str(encoder), hidden_sizes=[16])
    hparams = {**dict(model.hparams), "class_identifier": identifier}
    (root / "hparams.yaml").write_text(yaml.safe_dump(hparams))
    (root / "checkpoints").mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hparams,
                "pytorch-lightning_version": _lightning_version()},
               root / "checkpoints" / "model.ckpt")
    return str(root)


def _lightning_version() -> str:
    import pytorch_lightning

    return pytorch_lightning.__version__


def tiny_masked_lm(folder: str | Path, seed: int = 0) -> str:
    """A 2-layer BERT masked LM with its LM head and MiniLM's WordPiece tokenizer (no real masked
    LM with its head exists offline: BERT-diverge and the search's MLM candidates run on it)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    tokenizer = _minilm_tokenizer()
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = BertForMaskedLM(BertConfig(vocab_size=len(tokenizer), **_TINY))
    torch.random.set_rng_state(state)
    model.eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def minilm_masked_lm(folder: str | Path) -> str:
    """MiniLM's real encoder under a masked-LM head that is built, not trained (no masked LM with
    its trained head exists offline; MiniLM itself has none, and loading it as one is refused):
    the head's transform is the identity (then GELU and a unit LayerNorm), its bias 0 and its
    decoder MiniLM's own input embeddings, so a masked position's guess is the word piece whose
    embedding best matches the last layer's state there. The weights are fixed, not random, so
    the masked-LM metrics (BLANC, MLM-PPL) and their references run end to end on real encoder
    weights; the guesses are poor, and no score on it means anything about the texts."""
    import torch
    from transformers import AutoModel, BertForMaskedLM

    path = resolve_model("minilm")
    encoder = AutoModel.from_pretrained(path)
    model = BertForMaskedLM(encoder.config)
    model.bert.load_state_dict(encoder.state_dict(), strict=False)  # MiniLM's pooler: unused
    head = model.cls.predictions
    with torch.no_grad():
        head.transform.dense.weight.copy_(torch.eye(encoder.config.hidden_size))
        head.transform.dense.bias.zero_()
        head.transform.LayerNorm.weight.fill_(1.0)
        head.transform.LayerNorm.bias.zero_()
        head.bias.zero_()
    model.tie_weights()
    model.eval().save_pretrained(folder)
    _minilm_tokenizer().save_pretrained(folder)
    return str(folder)


def tiny_regressor(folder: str | Path, seed: int = 0) -> str:
    """A 1-output BERT sequence classifier (a regression head, as an STS model's) with MiniLM's
    tokenizer: NUBIA's semantic-similarity feature runs on it."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = _minilm_tokenizer()
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, num_labels=1, initializer_range=0.5,
                        **_TINY)
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def tiny_causal_lm(folder: str | Path, seed: int = 0) -> str:
    """A 2-layer GPT-2 with SmolLM2's BPE tokenizer (GPT-2 itself is not offline): the language
    model terms of NUBIA and XMoverScore run on it."""
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("smollm2"))
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2,
                        n_positions=512, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id)
    GPT2LMHeadModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def tiny_nubia_aggregator(path: str | Path, features: int = 8, seed: int = 0) -> str:
    """A scikit-learn ``MLPRegressor`` saved with joblib, as NUBIA's released aggregators are
    (6 or 8 input features), fitted to random targets."""
    import warnings

    import joblib
    import numpy as np
    from sklearn.neural_network import MLPRegressor

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(64, features))
    model = MLPRegressor(hidden_layer_sizes=(8,), max_iter=50, random_state=seed)
    with warnings.catch_warnings():  # 50 iterations on noise do not converge, by design
        warnings.simplefilter("ignore")
        model.fit(x, x @ rng.normal(size=features))
    joblib.dump(model, path)
    return str(path)
