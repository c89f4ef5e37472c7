"""Reading Finish as ToolBench's harness reads it (``rapidapi_wrapper._step``)."""

from __future__ import annotations

import pytest

from agents.finish import ANSWER_OBSERVATION, GIVE_UP_OBSERVATION, read_finish

NO_RETURN_TYPE = '{error:"must have "return_type""}'
NO_FINAL_ANSWER = '{error:"must have "final_answer""}'
BAD_CHOICE = '{error:""return_type" is not a valid choice"}'


@pytest.mark.parametrize(
    ("arguments", "outcome", "answer", "observation"),
    [
        (
            '{"return_type": "give_answer", "final_answer": "42"}',
            "answer",
            "42",
            ANSWER_OBSERVATION,
        ),
        # any final_answer counts, an empty or null one too
        ('{"return_type": "give_answer", "final_answer": ""}', "answer", "", ANSWER_OBSERVATION),
        ('{"return_type": "give_answer", "final_answer": null}', "answer", "", ANSWER_OBSERVATION),
        (
            '{"return_type": "give_answer", "final_answer": [1]}',
            "answer",
            "[1]",
            ANSWER_OBSERVATION,
        ),
        ('{"return_type": "give_answer"}', "error", "", NO_FINAL_ANSWER),
        ('{"return_type": "give_up_and_restart"}', "give_up", "", GIVE_UP_OBSERVATION),
        ('{"final_answer": "42"}', "error", "42", NO_RETURN_TYPE),
        ('{"return_type": "answer", "final_answer": "42"}', "error", "42", BAD_CHOICE),
        ("[]", "error", "", NO_RETURN_TYPE),  # ToolBench crashes on .keys(); no return_type here
        ("", "error", "", NO_RETURN_TYPE),
        # strict=False: a raw newline inside a string is fine
        (
            '{"return_type": "give_answer", "final_answer": "a\nb"}',
            "answer",
            "a\nb",
            ANSWER_OBSERVATION,
        ),
        # not JSON: ToolBench's lenient read; the answer loses only the closing quote and brace
        (
            '{"return_type": "give_answer", "final_answer": "say "hi" twice"}',
            "answer",
            'say "hi" twice',
            ANSWER_OBSERVATION,
        ),
        ('{"return_type": "give_up_and_restart", oops}', "give_up", "", GIVE_UP_OBSERVATION),
        ('{"return_type": "giveanswer", "x": 1', "error", "", BAD_CHOICE),
        ('{"return_type":"give_answer", broken', "error", "", NO_RETURN_TYPE),  # no space: no match
        ('{"return_type": "give_answer" "final_answer": "x', "answer", "x", ANSWER_OBSERVATION),
    ],
)
def test_read_finish(arguments: str, outcome: str, answer: str, observation: str) -> None:
    reading = read_finish(arguments)
    assert (reading.outcome, reading.final_answer, reading.observation) == (
        outcome,
        answer,
        observation,
    )
    assert reading.status == {"answer": 3, "give_up": 4, "error": 2}[outcome]


def test_lenient_return_type_is_the_text_up_to_the_first_quote_comma() -> None:
    reading = read_finish('{"return_type": "maybe", "final_answer": "x" junk')
    assert reading.outcome == "error" and reading.return_type == "maybe"
