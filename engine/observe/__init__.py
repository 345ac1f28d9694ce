"""Knowing what happened: network activity, stability waits, the page-side mutation stream and
sentinel verification of expected outcomes."""
