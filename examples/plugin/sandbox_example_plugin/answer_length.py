"""``answer-length``: a step metric, the final answer's length in characters over a cap.

One measure, ``answer_length``: ``min(1, len(final answer) / max_chars)`` for an episode that
answered; an episode without an answer is not counted (the measure does not apply to it).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from sandbox.eval.steps import Measure, StepEpisode, StepMetric


class AnswerLengthOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_chars: int = Field(default=500, gt=0, description="Length that scores 1.")


def answer_length(episode: StepEpisode, options: AnswerLengthOptions) -> dict[str, Measure]:
    answer = episode.traj.final_answer
    if answer is None:
        return {}
    return {"answer_length": Measure(value=min(1.0, len(answer) / options.max_chars), n=1)}


ANSWER_LENGTH = StepMetric(
    name="answer-length",
    summary="the final answer's length over max_chars, at most 1",
    measures=("answer_length",),
    score=answer_length,
    options=AnswerLengthOptions,
)
