import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("rep_ngram.py")
launch_gradio_widget(module)
