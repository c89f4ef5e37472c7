"""Step-level scores of episodes: what each step of a trajectory did against the task's reference.

``step_scores`` scores episodes and runs; the modules it composes: ``actions`` (calls as
canonical actions, the chosen path, matching to the reference), ``format_score`` (instruct),
``tool_selection``, ``arg_scores`` (understand), ``plan_score``, ``reason_score`` (with
``similarity``), ``review_score``, ``efficiency``, ``matching`` and ``measure``. Pure functions;
importing a metric stays cheap. May import ``sandbox.store`` and ``eval`` modules.
"""
