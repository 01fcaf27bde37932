"""The test's own canonical lighteval task (built-in tasks fetch their data from the Hub): a generative task
in a ``--custom-tasks`` file over a local parquet dataset (``hf_repo`` a folder), with a list-of-strings
``choices`` column and a few-shot split (``train``, two rows; ``test`` has four): the documents of
``lm_eval_canonical.write_canonical_data``, so both harnesses' tests read the same ones."""

from __future__ import annotations

from pathlib import Path

from lm_eval_canonical import write_canonical_data

TASK_MODULE = """
from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc


def planets_prompt(line, task_name=None):
    options = "\\n".join(f"- {{choice}}" for choice in line["choices"])
    return Doc(
        task_name=task_name,
        query=f"Question: {{line['question']}}\\nOptions:\\n{{options}}\\nAnswer:",
        choices=[f" {{line['answer']}}"],
        gold_index=0,
    )


planets = LightevalTaskConfig(
    name="planets",
    prompt_function=planets_prompt,
    hf_repo={data!r},
    hf_subset="default",
    hf_avail_splits=["train", "test"],
    evaluation_splits=["test"],
    few_shots_split="train",
    few_shots_select="sequential",
    generation_size=6,
    stop_sequence=["\\n"],
    metrics=[Metrics.exact_match],
    version=0,
)

TASKS_TABLE = [planets]
"""


def write_canonical_task(folder: Path) -> Path:
    """The test's own task: parquet data (a test and a few-shot split) and the custom-tasks file; its path."""
    data = write_canonical_data(folder)
    module = folder / "planets_tasks.py"
    module.write_text(TASK_MODULE.format(data=str(data.resolve())))
    return module
