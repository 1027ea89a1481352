import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("blindspot.py")
launch_gradio_widget(module)
