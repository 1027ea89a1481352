"""LLM judges: a prompted chat model as a metric (``llm_judge``), its prompt templates
(``templates/*.toml``), its two backends (in-process, OpenAI-compatible servers), how a grade
is read from a reply, and the agreement and calibration of judges."""
