"""Small shared pieces every part of the window may use: the look (`look`: colours and glyphs), labels
(`labels`), an eliding label, a flow layout, fitting a window to its screen (`window_fit`) and engine
coroutines started from Qt slots (`aio`)."""
