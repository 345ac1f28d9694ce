"""engine.secret_values.scrub on models: a secret's characters inside a number are not a secret shown."""

from engine.models import PageEvent, RunResult
from engine.secret_values import scrub

CODE = "493817"  # a one-time code whose digits an epoch-ms time may hold


def test_a_code_inside_a_number_leaves_the_number_and_masks_the_words():
    """The model's JSON has the code's digits inside `at` (epoch ms) and a prefix of them ending a number: masking
    the JSON text broke the number and the run's end raised a ValidationError (a CI run of a replay whose code
    was 493817). The words are masked, the numbers kept."""
    event = PageEvent(category="text", kind="added", text=f"Your code {CODE} was accepted", age_ms=4938,
                      frame_id="main", at=1764385493817.5)
    clean = scrub(event, [CODE])
    assert CODE not in clean.text and clean.text.startswith("Your code ") and clean.text.endswith(" was accepted")
    assert (clean.at, clean.age_ms) == (event.at, event.age_ms)

    result = RunResult(task="sign up", status="success", answer=f"signed up with {CODE}", steps=[], messages=[],
                       url=f"http://127.0.0.1:8000/done?code={CODE}", incidents=[f"{CODE} at 1764385493817"])
    clean_run = scrub(result, [CODE], any_prefix=True)
    assert CODE not in clean_run.model_dump_json() and "4938" not in (clean_run.answer or "")
    assert clean_run.status == "success"


def test_a_secret_that_begins_with_a_field_name_masks_values_not_the_models_keys():
    """A password that begins with a field's name ("answer-42x" ends a word at "answer") matched the key in the
    model's JSON text: the masked key was then unknown, and an optional field silently lost its value. Only the
    model's strings are masked."""
    result = RunResult(task="place the order", status="success", answer="the order is placed", steps=[],
                       messages=[], url="http://127.0.0.1:8000/done", incidents=["typed answer-42x into Password"])
    clean = scrub(result, ["answer-42x"])
    assert clean.answer == "the order is placed" and clean.task == "place the order"
    assert "answer-42x" not in clean.model_dump_json() and clean.incidents == ["typed •••••••• into Password"]
