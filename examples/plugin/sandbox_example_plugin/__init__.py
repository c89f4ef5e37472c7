"""An example agent-sandbox plugin, installed like any package and found by its entry points.

- strategy ``first-hit`` (``sandbox_example_plugin:FirstHit``): ReAct that answers with the
  first successful observation;
- miss policy ``constant`` (``sandbox_example_plugin.constant:ConstantPolicy``): every call
  without a recording gets the option ``body``;
- evaluation protocol ``strict`` (``sandbox_example_plugin.strict:StrictProtocol``): the default
  protocol where an unsure episode and a tie count 0;
- step metric ``answer-length`` (``sandbox_example_plugin.answer_length:ANSWER_LENGTH``): the
  final answer's length over the option ``max_chars``, at most 1.

``tests/examples/test_example_plugin.py`` installs it with ``pip install --target`` and runs it
through the ``sandbox`` command line.
"""

from sandbox_example_plugin.first_hit import FirstHit

__all__ = ["FirstHit"]
