import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("preference_accuracy.py")
launch_gradio_widget(module)
