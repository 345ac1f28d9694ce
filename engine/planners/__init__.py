"""Planners that propose steps for the supervised loop (all implement `engine.loop.planner.Planner`),
and the model-facing payload they share:

- `heuristic` — the offline default: a deterministic, grounded instruction follower (no model);
- `openai_planner` — any OpenAI-compatible chat model, through tool calls or JSON replies;
  its tools and prompt (`openai_tools`), the server calls (`openai_transport`), reply reading
  (`openai_replies`);
- `backend` — a backend speaking the seed contract `POST /api/agent/interact`;
- `payload` — what a model sees: the semantic-first observation within a token budget (DOM RAG,
  delta hashing) and the context a model may ask for (skeleton, screenshot, full DOM);
- `registry.make_planner(name, …)` — build one by name (the CLI and the GUI use it).

Import from the submodules; this package imports nothing itself, so loading the offline planner
does not load the openai SDK.
"""
