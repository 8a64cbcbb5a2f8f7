"""The limits of one agent episode, defined once: the bench, the agent endpoint and training all read these.

    limits = KopaSettings().episode                    # kopa.toml [episode], or KOPA_EPISODE__MAX_TURNS=...
    limits = EpisodeLimits(max_turns=4)                # a run's own
    limits.max_turns, limits.max_tool_tokens, ...

The defaults are the paper's (Appendix I: "we cap each episode at 15 assistant turns and 16K tool-response
tokens, with episode and tool timeouts of 600 s and 60 s"), plus a call budget of 30 tool calls per episode
(KOPA-Bench's largest ``max_allowed_calls`` is 29) and no prompt budget: a model's own context bounds it.
``bench.agents.step`` enforces the turns, calls, per-turn width, repeated turns, tool-output cap and prompt budget, and shows the
tools with their descriptions cut to ``max_description_chars`` and, with ``bare_generic_params``, the parameters
every tool shares by name and type only (``shown_tools``; EDGE's export renders training rows
through the same function, so a model is trained on the prompts it is evaluated on);
``bench.episode.run_episode`` the two timeouts.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EpisodeLimits"]


class EpisodeLimits(BaseModel):
    """How far one episode may go (module doc)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_turns: int = Field(15, ge=1, description="assistant turns (model generations) per episode")
    max_calls: int | None = Field(30, ge=0, description="tool calls per episode; calls past it are answered "
                                                        "'not run' and are not calls of the episode. None: no budget")
    max_parallel_calls: int | None = Field(None, ge=1, description="tool calls run per assistant turn; the rest are "
                                                                   "answered 'not run'. None: all of them")
    max_tool_tokens: int = Field(16_000, ge=64, description="cap on one tool response, in approximate tokens "
                                                            "(UTF-8 bytes / 3)")
    max_prompt_tokens: int | None = Field(None, ge=1, description="prompt budget: the episode stops without an "
                                                                  "answer when the conversation would exceed it "
                                                                  "(approximate tokens; exact ones in training). "
                                                                  "None: the model's context decides")
    max_description_chars: int | None = Field(None, ge=0, description="tool and parameter descriptions as the model "
                                                                      "sees them: cut to their first sentence and to "
                                                                      "this many characters; 0 drops them. None: "
                                                                      "whole")
    bare_generic_params: bool = Field(False, description="the API key, page and page-size parameters (KEY, pageNo, "
                                                         "numOfRows) shown by name and type only: their prose is the "
                                                         "same in every tool, and the system prompt says how keys and "
                                                         "pages work")
    max_repeated_turns: int | None = Field(None, ge=2, description="the episode stops without an answer when this "
                                                                    "many turns in a row make the same calls and get "
                                                                    "the same results (a loop that greedy decoding "
                                                                    "does not leave). None: never, as in the paper")
    episode_timeout_s: float = Field(600.0, gt=0, description="the whole episode, model and tools together")
    tool_timeout_s: float = Field(60.0, gt=0, description="one tool call")
