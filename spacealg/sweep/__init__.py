"""Whole registries checked as one job (``spacealg check 'gymnax:*' --results FILE``): each
environment in a process of its own (:mod:`~spacealg.sweep.isolated`), on local workers or
Ray (:mod:`~spacealg.sweep.run`), forked from one warm process that has imported what a
check needs (:mod:`~spacealg.sweep.warm`), the longest first
(:mod:`~spacealg.sweep.schedule`), one JSON line per finished environment in a results file
that a killed sweep resumes from (:mod:`~spacealg.sweep.results`), and the report a person
reads (:mod:`~spacealg.sweep.report`)."""

from spacealg.sweep.isolated import check_isolated
from spacealg.sweep.report import markdown, summary, write_between_markers
from spacealg.sweep.results import append, read
from spacealg.sweep.run import sweep
from spacealg.sweep.schedule import longest_first, seconds_of

__all__ = ["append", "check_isolated", "longest_first", "markdown", "read", "seconds_of", "summary", "sweep",
           "write_between_markers"]
