import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("greedy_matching.py")
launch_gradio_widget(module)
