"""The index-build progress line: redrawn in place on a terminal, plain lines in a log."""

from __future__ import annotations

import io
import sys

import pytest

from searchport.entrypoints.cli.main import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_whole_lines_and_the_last_count(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = ProgressBar("building cities")
    for done in range(0, 5001, 100):  # many calls within five seconds: one line, then the end
        bar(done, 5000)
    bar.finish()
    text = err.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[0].startswith("building cities [") and "0/5000 docs" in lines[0]
    assert "5000/5000 docs" in lines[-1] and len(lines) == 2


def test_a_terminal_gets_one_line_redrawn(monkeypatch: pytest.MonkeyPatch) -> None:
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    bar = ProgressBar("building cities")
    bar(0, 10)
    bar(10, 10)
    bar.finish()
    text = err.getvalue()
    assert text.count("\r") == 2 and "10/10 docs" in text.split("\r")[-1]
    assert text.count("\n") == 1 and text.endswith("\n")
