"""One list of error codes: every error class's code is an ErrorCode; a code that is not one fails where
it is raised; the strings stored before the enum still load; timeouts of different remedies differ."""

from __future__ import annotations

import json

import pytest

import engine.errors as errors
from engine.errors import ErrorCode, NavigationError, VigilError
from engine.models import ActionResult, StepRecord


def _error_classes() -> list[type[VigilError]]:
    return [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, VigilError)]


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_every_error_class_has_a_code_from_the_enum(cls):
    assert isinstance(cls.code, ErrorCode)


def test_a_code_that_is_not_in_the_enum_fails_where_it_is_raised():
    with pytest.raises(ValueError, match="NAVIGATION_FAILD"):
        NavigationError("x", code="NAVIGATION_FAILD")


def test_a_code_reads_compares_and_serializes_as_its_string():
    exc = NavigationError("x", code=ErrorCode.BAD_URL)
    assert exc.code == "BAD_URL" and f"{exc.code}" == "BAD_URL" and json.dumps(exc.code) == '"BAD_URL"'
    r = ActionResult(success=False, action="click(3)", error_code=ErrorCode.OCCLUDED)
    assert json.loads(r.model_dump_json())["error_code"] == "OCCLUDED"


@pytest.mark.parametrize("stored", ["NOT_FOUND", "STALE", "OCCLUDED", "NOT_ACTIONABLE", "DISABLED", "TIMEOUT",
                                    "NAVIGATION_FAILED", "VALUE_MISMATCH", "NO_EFFECT", "BAD_ARGUMENT",
                                    "TAB_CRASHED", "BROWSER_CLOSED", "REFUSED", "BAD_URL"])
def test_step_records_stored_before_the_enum_still_load(stored):
    rec = StepRecord.model_validate_json(json.dumps(
        {"index": 0, "result": {"success": False, "action": "click(3)", "error_code": stored}}))
    assert rec.result is not None and rec.result.error_code == stored


def test_an_unknown_code_in_a_result_is_refused():
    with pytest.raises(ValueError):
        ActionResult(success=False, action="click(3)", error_code="TYPO")


def test_timeouts_with_different_remedies_have_different_codes():
    assert len({ErrorCode.NAVIGATION_TIMEOUT, ErrorCode.SNAPSHOT_TIMEOUT, ErrorCode.CDP_TIMEOUT}) == 3
    assert errors.CDPTimeoutError("Runtime.evaluate", "no answer").code is ErrorCode.CDP_TIMEOUT
    assert isinstance(errors.CDPTimeoutError("m", "x"), errors.CDPError)
    assert errors.NoContextError("x").code is ErrorCode.NO_CONTEXT
