import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("embedding_average.py")
launch_gradio_widget(module)
