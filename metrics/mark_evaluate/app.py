import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("mark_evaluate.py")
launch_gradio_widget(module)
