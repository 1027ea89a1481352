import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("nist_mt.py")
launch_gradio_widget(module)
