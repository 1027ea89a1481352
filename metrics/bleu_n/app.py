import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("bleu_n.py")
launch_gradio_widget(module)
