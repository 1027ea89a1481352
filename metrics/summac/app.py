import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("summac.py")
launch_gradio_widget(module)
