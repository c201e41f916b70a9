"""The one error class for bad input: every reader raises it with the file and line."""

from __future__ import annotations


class InputError(ValueError):
    """Malformed or inconsistent input.

    ``path`` is the file (or ``None`` for in-memory data), ``line`` the 1-based line
    number (or ``None`` when the problem is not tied to a line). ``str(err)`` is one
    line, ``path:line: message``, which is what the command-line tools print.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        return where + self.message
