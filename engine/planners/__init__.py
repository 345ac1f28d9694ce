"""Planners that propose steps for the supervised loop, and the model-facing payload they share.

- `payload` — what a model sees: the semantic-first observation within a token budget (DOM RAG,
  delta hashing) and the context a model may ask for (skeleton, screenshot, full DOM);
- `openai_planner` — any OpenAI-compatible chat model, through tool calls or JSON replies.
"""

from engine.planners.openai_planner import Exchange, OpenAIPlanner
from engine.planners.payload import (ContextKind, DeltaTracker, ModelObservation, RagResult, build_observation,
                                     context_artifact, rag_filter)

__all__ = ["OpenAIPlanner", "Exchange", "ContextKind", "DeltaTracker", "ModelObservation", "RagResult",
           "build_observation", "context_artifact", "rag_filter"]
