"""The live page: the screencast view in three layers (`page_input` ← `snapshot_layer` ← `page_view`), the
Set-of-Mark overlay it draws (`overlay`, `live_shift`), the browser's tabs above it (`tab_strip`) and the
approval bar floating over it (`step_overlay`)."""
