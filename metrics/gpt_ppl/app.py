import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("gpt_ppl.py")
launch_gradio_widget(module)
