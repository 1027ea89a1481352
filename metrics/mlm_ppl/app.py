import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("mlm_ppl.py")
launch_gradio_widget(module)
