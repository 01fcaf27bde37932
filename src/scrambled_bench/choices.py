"""The labels of multiple-choice options, one constant for the whole package."""

from __future__ import annotations

LETTERS = "ABCDEFGHIJ"
"""Option labels in order: the sources' gold answers and the prompts' ``(A)...`` use them (the paper's tasks
have at most five options, AQuA's A-E)."""
