"""A run as it reads: the chat (`chat_view`, its turns in `chat_turn`), the plan (`plan_view`) and the
picture after a step in a window of its own (`picture_window`)."""
