"""The recorded sessions: the Sessions tab (`sessions_panel`) and its exports (`session_exports`), one session
read-only (`session_view`) and how their status and times read (`session_text`)."""
