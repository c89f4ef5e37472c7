"""Probe mode: teacher-forced questions about each reference step prefix, and their scores.

Beside ``sandbox.eval``: it asks a model questions through the run's tools
(``sandbox.tool_envs``) and scores the answers with the step-level metrics
(``sandbox.eval.steps``). Only ``sandbox.commands`` imports it.
"""
