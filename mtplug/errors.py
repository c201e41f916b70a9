"""The one error class for bad input: every reader raises it with the file and line."""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with every character that is not printable (``str.isprintable``: control
    characters such as CR, NUL, ESC and tab, line and paragraph separators, format
    characters, surrogates) written as Python writes it in a repr: ``\\r``, ``\\x00``,
    ``\\x1b``, ``\\u2028``. A message quoting a bad line then stays one line, and a CR from
    the input cannot move a terminal's cursor back over the file name and line number.
    Printable text, backslashes included, is kept as it is (so escaping twice changes
    nothing)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class InputError(ValueError):
    """Malformed or inconsistent input.

    ``path`` is the file (or ``None`` for in-memory data), ``line`` the 1-based line
    number (or ``None`` when the problem is not tied to a line). ``str(err)`` is one
    line, ``path:line: message``, which is what the command-line tools print; the
    characters of the path and the message that are not printable (a CR or NUL copied
    from a bad line) are escaped there (:func:`printable`). ``message`` and ``path`` keep
    them as given.
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
        return printable(where + self.message)
