import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("nubia.py")
launch_gradio_widget(module)
