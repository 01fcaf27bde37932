"""The test's own canonical lm-eval task (built-in tasks fetch their data from the Hub): a ``generate_until``
task over local parquet files, with a ``!function process_docs`` in a ``utils.py`` beside its YAML, a
list-of-strings ``choices`` column and a few-shot split (``train``, two rows; ``test`` has four)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

QUESTIONS = [
    "Which planet in our solar system is closest to the burning sun?",
    "What colour does the clear daytime sky usually have?",
    "Which animal is known for carrying its house on its back?",
    "What do thirsty plants need most after a long drought?",
    "Which instrument has black and white keys?",
    "What frozen water falls from winter clouds?",
]
CHOICES = [
    ["Mercury", "Neptune", "Saturn"],
    ["Purple", "Blue", "Orange"],
    ["Snail", "Horse", "Eagle"],
    ["Water", "Sand", "Smoke"],
    ["Piano", "Trumpet", "Violin"],
    ["Snow", "Sand", "Leaves"],
]
ANSWERS = ["Mercury", "Blue", "Snail", "Water", "Piano", "Snow"]
UTILS = """
def process_docs(dataset):
    return dataset.map(lambda doc: {"options": "\\n".join(f"- {choice}" for choice in doc["choices"])})
"""
TASK_YAML = """
task: planets
dataset_path: parquet
dataset_kwargs:
  data_files:
    train: {train}
    test: {test}
output_type: generate_until
test_split: test
fewshot_split: train
num_fewshot: 2
process_docs: !function utils.process_docs
doc_to_text: "Question: {{{{question}}}}\\nOptions:\\n{{{{options}}}}\\nAnswer:"
doc_to_target: " {{{{answer}}}}"
target_delimiter: ""
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 6
  temperature: 0.0
  do_sample: false
filter_list:
  - name: strip
    filter:
      - function: remove_whitespace
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: true
metadata:
  version: 3.0
"""


def write_canonical_data(folder: Path) -> Path:
    """The documents both harnesses' canonical tasks read, as parquet: ``test`` (four rows) and the few-shot
    split ``train`` (two); the folder holding them."""
    data = folder / "data"
    data.mkdir(parents=True)
    frame = pd.DataFrame({"question": QUESTIONS, "choices": CHOICES, "answer": ANSWERS})
    frame.iloc[2:].to_parquet(data / "test.parquet")
    frame.iloc[:2].to_parquet(data / "train.parquet")  # the demonstrations
    return data


def write_canonical_task(folder: Path) -> Path:
    """The test's own task: parquet data (a test and a few-shot split), utils.py and the YAML; its folder."""
    data = write_canonical_data(folder)
    tasks = folder / "tasks" / "planets"
    tasks.mkdir(parents=True)
    (tasks / "utils.py").write_text(UTILS)
    (tasks / "planets.yaml").write_text(
        TASK_YAML.format(train=data / "train.parquet", test=data / "test.parquet")
    )
    return tasks.parent
