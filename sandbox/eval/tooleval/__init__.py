"""ToolEval's (StableToolBench's) evaluation, computed the way its code computes it.

``answer`` (an episode as ToolEval's converted answer), ``functions`` (its judge functions),
``rules`` (its pass-rate rules), ``preference`` (its preference over rounds) and the two protocols
built from them: ``protocol_toolbench`` and ``protocol_toolbench_normalized``.
May import ``sandbox.interop`` (the ToolBench converter) and ``eval`` modules.
"""
