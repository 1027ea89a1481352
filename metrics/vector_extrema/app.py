import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("vector_extrema.py")
launch_gradio_widget(module)
