"""Mutants of sound environments for ``benchmarks/mutation_score.py``.

A *base* is a sound environment (:data:`BASES`); an *operator* (:data:`OPERATORS`) turns a
base's factory into a factory of the same environment with one observable defect from the
``k``-th step of every episode on; :func:`mutant` applies one to one base, or raises
:class:`NotApplicable` saying why the defect has no place in that base.
"""

from mutants.catalogue import BASES, OPERATORS, Base, NotApplicable, Operator, mutant

__all__ = ["BASES", "OPERATORS", "Base", "NotApplicable", "Operator", "mutant"]
