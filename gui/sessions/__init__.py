"""The recorded sessions: the Sessions tab (`sessions_panel`), one session read-only (`session_view`) and
how their status and times read (`session_text`)."""
