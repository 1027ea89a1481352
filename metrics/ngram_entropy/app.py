import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("ngram_entropy.py")
launch_gradio_widget(module)
