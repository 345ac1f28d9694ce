"""The approval bar (`approval_bar`): what it says (`approval_text`), its Edit panel (`step_edit`), a page's
dialog (`dialog_question`), the wait for the person's own input (`in_page_wait`) and where a step's target
is in a snapshot (`step_target`)."""
