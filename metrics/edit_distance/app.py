"""The Hub Space of this metric: the widget the `evaluate` template launches, on the script beside this file.

A Space runs `python app.py`; importing this file (the package's tools walk the metric folder's modules)
launches nothing.
"""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

if __name__ == "__main__":
    launch_gradio_widget(evaluate.load(str(Path(__file__).resolve().parent)))
