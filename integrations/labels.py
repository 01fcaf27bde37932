"""Metric keys as readers read them: ``acc,none`` becomes ``accuracy``, ``exact_match,strip`` becomes
``exact match (filter strip)``, lighteval's ``em`` becomes ``exact match``. A harness splits its own keys
(:meth:`~.base.Harness.metric_label`); the common names are here, once."""

from __future__ import annotations

READABLE = {
    "acc": "accuracy",
    "accuracy": "accuracy",
    "acc_norm": "accuracy (length-normalised)",
    "acc_mutual_info": "accuracy (mutual information)",
    "exact_match": "exact match",
    "em": "exact match",
    "quasi_em": "quasi exact match",
    "prefix_quasi_exact_match": "prefix quasi exact match",
    "extractive_match": "extractive match",
    "maj@1": "majority at 1",
    "pass@1": "pass at 1",
    "f1": "F1",
    "mcc": "Matthews correlation",
    "bleu": "BLEU",
    "chrf": "chrF",
    "ter": "TER",
    "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "perplexity": "perplexity",
    "word_perplexity": "word perplexity",
    "choice": "choice (correct)",
    "match": "match",
    "includes": "includes",
    "model_graded_qa": "model-graded QA",
    "recovery_rate": "recovery rate",
    "edit_distance": "edit distance",
}
"""Metric names (as the harnesses log them) and their readable names."""


def readable_metric(name: str, qualifier: str | None = None) -> str:
    """A metric's readable name, with a qualifier (a filter, a scorer) in parentheses where it says
    something; an unknown name has its underscores turned into spaces.

    >>> readable_metric("acc"), readable_metric("exact_match", "strip"), readable_metric("my_score")
    ('accuracy', 'exact match (strip)', 'my score')
    >>> readable_metric("acc", "none"), readable_metric("acc", "")
    ('accuracy', 'accuracy')
    """
    label = READABLE.get(name) or name.replace("_", " ")
    if qualifier and qualifier != "none":
        label = f"{label} ({qualifier})"
    return label
