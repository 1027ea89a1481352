import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("discoscore.py")
launch_gradio_widget(module)
