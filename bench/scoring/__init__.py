"""The three scorers of KOPA-Bench (paper §2.4, Appendix B): RESPONSE, ENVIRONMENT and ACTION.

RESPONSE and ENVIRONMENT decide whether an episode passes (the ones in the task's reward
basis); ACTION always grades the trajectory that got there (correctness and efficiency, B.4).
``score_trajectory`` (``verdicts``) turns a finished trajectory into all of them: the bench's episodes and the
GRPO reward both score there.
"""

from .action import ActionScore, GoldenCall, PredictedCall, score_action
from .environment import EMPTY_WORKSPACE_HASH, EnvironmentScore, golden_state_hash, score_environment
from .judge import JudgeError, LLMJudge, grade_response, judge_from_profile
from .response import ResponseScore, score_answer, score_response
from .verdicts import Verdicts, golden_calls, golden_schemas, grade_trajectory, score_trajectory

__all__ = [
    "EMPTY_WORKSPACE_HASH", "ActionScore", "EnvironmentScore", "GoldenCall", "JudgeError", "LLMJudge", "PredictedCall",
    "ResponseScore", "Verdicts", "golden_calls", "golden_schemas", "golden_state_hash", "grade_response",
    "grade_trajectory", "judge_from_profile", "score_action", "score_answer", "score_environment", "score_response",
    "score_trajectory",
]
