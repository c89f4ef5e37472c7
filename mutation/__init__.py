"""Mutation testing of the core modules with mutmut: scores per module, the goal, CI's check.

``python -m mutation`` (``make mutate``) runs every group of ``mutation.modules`` and fails when
a module's tests kill fewer than ``mutation.results.GOAL`` of its mutants; ``--changed --hand``
is the check ``.ci/run`` makes. docs/testing.md explains the method and lists the scores.
"""
