"""The runnable examples of README.md and docs/*.md: every marked shell block is run and its
output compared with what the page shows, so that a change that moves a quoted number fails
here until the page is updated. How to mark an example and how to update one:
docs/development.md, "Runnable examples".

A marker is an HTML comment on a line of its own (invisible on GitHub and on the site)::

    <!-- runnable [timeout=SECONDS] [skip='why'] [cmd='COMMAND'] -->
    ```sh                                      the block to run (with cmd=, the command instead)
    ...
    ```
    <!-- output [numbers[=REGEX]] [only=REGEX] [ignore=REGEX] [mask=REGEX] -->
    ```text                                    what it prints (with numbers: also a paragraph or table)
    ...
    ```

Each example runs with bash (``set -euo pipefail``) in a temporary folder of its own, with
the ``mtplug`` (and ``python3``) of the interpreter running the tests first on PATH; its
stdout and stderr, merged in order, are compared with each ``output`` marker after it (up
to the next ``runnable``). The examples run two (or more, with more cores) at a time.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import signal
import subprocess
import sysconfig
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: the pages searched: README.md and docs/*.md ...
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: ... except those quoting runs on other machines (timings, real systems, ../shared): a
#: marker in them is an error, as it is anywhere under docs/ outside the pages searched
OTHER_MACHINES = ("docs/speed.md", "docs/real-systems.md")
#: pages that must keep checked examples: one whose markers all went would fail here
MUST_HAVE = ("README.md", "docs/usage.md", "docs/tune.md", "docs/dtrain.md", "docs/metrics.md",
             "docs/experiments.md", "docs/mert.md")
DEFAULT_TIMEOUT = 60.0
#: the examples run at once (2 on a 2-core machine)
WORKERS = max(1, min(4, os.cpu_count() or 1))
#: the installed scripts (mtplug, python3) of the interpreter running the tests
SCRIPTS = Path(sysconfig.get_path("scripts"))
#: variables that would change what the stand-in decoder or dtrain run
UNSET = ("STANDIN_POOL", "STANDIN_SOURCE", "STANDIN_BY_POSITION", "STANDIN_SPARSE", "CDEC")

MARKER = re.compile(r"<!--\s*(runnable|output)(?:\s+(.*?))?\s*-->\s*")
LOOKS_LIKE_A_MARKER = re.compile(r"\s*<!--\s*(runnable|output)\b")
FENCE = re.compile(r"(`{3,}|~{3,})\s*([^\s`]*)")
#: a number as the pages and the programs write it: 3, -0.25, 1e-05, +600 (not the 0 of LM0,
#: nor the digits of a version's later parts); "−" (U+2212) is read as "-"
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?!\w)")
#: what a mask= match becomes, on both sides
MASKED = "…"
SHELLS = ("sh", "bash", "shell")
OPTIONS = {"runnable": {"timeout", "skip", "cmd"}, "output": {"numbers", "only", "ignore", "mask"}}


class MarkerError(ValueError):
    """A malformed marker: ``PAGE:LINE: what is wrong``."""


@dataclass
class Output:
    """An ``output`` marker: the expected text and how it is compared."""

    line: int                  # the marker's line (1-based)
    expected: str
    numbers: re.Pattern | None = None   # compare the numbers (those matching it) instead of the text
    only: list = field(default_factory=list)
    ignore: list = field(default_factory=list)
    mask: list = field(default_factory=list)


@dataclass
class Example:
    """A ``runnable`` marker: the script, how it runs and the outputs it must print."""

    page: str                  # relative to the repository
    line: int
    script: str
    timeout: float = DEFAULT_TIMEOUT
    skip: str | None = None
    outputs: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


# ---------------------------------------------------------------------------- parsing
def _options(kind: str, text: str, where: str) -> dict:
    """The ``key=value`` (or bare ``key``) words of a marker, shell-quoted; repeatable
    keys (only, ignore, mask) as lists."""
    try:
        words = shlex.split(text or "")
    except ValueError as exc:
        raise MarkerError(f"{where}: cannot split the {kind} marker's options: {exc}") from None
    found: dict = {}
    for word in words:
        key, has_value, value = word.partition("=")
        if key not in OPTIONS[kind]:
            raise MarkerError(f"{where}: unknown {kind} option {key!r} (known: {', '.join(sorted(OPTIONS[kind]))})")
        if key in ("only", "ignore", "mask"):
            try:
                found.setdefault(key, []).append(re.compile(value))
            except re.error as exc:
                raise MarkerError(f"{where}: {key}={value!r} is not a regular expression: {exc}") from None
        elif key in found:
            raise MarkerError(f"{where}: {key} given twice")
        elif key == "numbers":
            try:
                found[key] = re.compile(value if has_value else NUMBER.pattern)
            except re.error as exc:
                raise MarkerError(f"{where}: numbers={value!r} is not a regular expression: {exc}") from None
        elif not has_value or not value:
            raise MarkerError(f"{where}: {key} needs a value ({key}=...)")
        else:
            found[key] = value
    return found


def _fenced(lines: list, start: int, where: str) -> tuple:
    """(info string, content, index after the closing fence) of the fenced block opening at
    ``lines[start]``."""
    opening = FENCE.match(lines[start])
    assert opening is not None
    fence, info = opening.groups()
    for end in range(start + 1, len(lines)):
        if lines[end].startswith(fence[0] * len(fence)) and not lines[end].strip(fence[0] + " \t"):
            return info, "\n".join(lines[start + 1:end]), end + 1
    raise MarkerError(f"{where}: the fenced block after the marker is never closed")


def parse_page(text: str, page: str) -> list:
    """The examples marked in a page's Markdown (``page``: its name in messages). Markers
    inside fenced blocks are text, not markers."""
    lines = text.splitlines()
    examples: list = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if FENCE.match(line):
            i = _fenced(lines, i, f"{page}:{i + 1}")[2]
            continue
        if not LOOKS_LIKE_A_MARKER.match(line):
            i += 1
            continue
        marker_line, where = i + 1, f"{page}:{i + 1}"
        found = MARKER.fullmatch(line)
        if found is None:
            raise MarkerError(f"{where}: a marker is one line, '<!-- runnable ... -->' or '<!-- output ... -->'")
        kind, options = found.group(1), _options(found.group(1), found.group(2), where)
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block = FENCE.match(lines[j]) if j < len(lines) else None
        if kind == "runnable":
            try:
                timeout = float(options.get("timeout", DEFAULT_TIMEOUT))
            except ValueError:
                raise MarkerError(f"{where}: timeout={options['timeout']!r} is not a number of seconds") from None
            if "cmd" in options:
                script, i = options["cmd"], i + 1
            elif block is None or block.group(2) not in SHELLS:
                raise MarkerError(f"{where}: a runnable marker comes right before a ```sh block (or gives cmd=)")
            else:
                _, script, i = _fenced(lines, j, where)
            examples.append(Example(page, marker_line, script, timeout, options.get("skip")))
            continue
        if not examples:
            raise MarkerError(f"{where}: an output marker without a runnable marker before it")
        if block is not None:
            _, expected, i = _fenced(lines, j, where)
        elif "numbers" not in options:
            raise MarkerError(f"{where}: an exact output is a fenced block after the marker "
                              "(a paragraph or table needs 'numbers')")
        else:
            end = j
            while end < len(lines) and lines[end].strip() and not LOOKS_LIKE_A_MARKER.match(lines[end]):
                end += 1
            if end == j:
                raise MarkerError(f"{where}: no paragraph or table after the output marker")
            expected, i = "\n".join(lines[j:end]), end
        examples[-1].outputs.append(Output(marker_line, expected, options.get("numbers"),
                                           options.get("only", []), options.get("ignore", []),
                                           options.get("mask", [])))
    for example in examples:
        if not example.outputs and example.skip is None:
            raise MarkerError(f"{example.id}: a runnable example without an output marker after it "
                              "checks nothing (add one, or skip='why')")
    return examples


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def collect() -> tuple:
    """(examples of README.md and docs/*.md, errors): a malformed marker, or a marker in a
    page that is not searched, is an error."""
    examples, errors = [], []
    for path in PAGES:
        page = _relative(path)
        if page in OTHER_MACHINES:
            continue
        try:
            examples += parse_page(path.read_text(encoding="utf-8"), page)
        except MarkerError as exc:
            errors.append(str(exc))
    searched = {_relative(p) for p in PAGES} - set(OTHER_MACHINES)
    for path in sorted((REPO / "docs").rglob("*.md")):
        if _relative(path) not in searched and any(LOOKS_LIKE_A_MARKER.match(ln) for ln in
                                                   _outside_fences(path.read_text(encoding="utf-8"))):
            errors.append(f"{_relative(path)}: has example markers, but its examples are never run (only "
                          f"README.md and docs/*.md are, less {', '.join(OTHER_MACHINES)}, which quote runs "
                          "on other machines)")
    return examples, errors


def _outside_fences(text: str) -> list:
    lines, kept, fence = text.splitlines(), [], None
    for line in lines:
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None and line.startswith(fence) and not line.strip(fence[0] + " \t"):
            fence = None
        elif fence is None:
            kept.append(line)
    return kept


# ---------------------------------------------------------------------------- comparing
def _prepared(text: str, output: Output, printed: bool) -> list:
    """The lines compared: trailing blanks and empty lines at both ends dropped; of the
    run's output (``printed``) only the lines only= matches (the page shows those), then,
    on both sides, the lines ignore= matches dropped and mask= applied."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    if printed and output.only:
        lines = [ln for ln in lines if any(p.search(ln) for p in output.only)]
    lines = [ln for ln in lines if not any(p.search(ln) for p in output.ignore)]
    for pattern in output.mask:
        lines = [pattern.sub(MASKED, ln) for ln in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def numbers(text: str, pattern: re.Pattern | None = None) -> list:
    """The numbers in ``text`` in order (those that fully match ``pattern``), as strings."""
    found = NUMBER.findall(text.replace("\u2212", "-"))
    return [n for n in found if pattern is None or pattern.fullmatch(n)]


def compare(output: Output, printed: str) -> str | None:
    """None when ``printed`` matches ``output``, else what differs."""
    expected, actual = _prepared(output.expected, output, False), _prepared(printed, output, True)
    if output.numbers is None:
        if expected == actual:
            return None
        diff = difflib.unified_diff(expected, actual, "the page", "the run", lineterm="", n=1)
        return "the output differs from the page:\n" + "\n".join(diff)
    pattern = None if output.numbers.pattern == NUMBER.pattern else output.numbers
    want, got = numbers("\n".join(expected), pattern), numbers("\n".join(actual), pattern)
    if [Decimal(n) for n in want] == [Decimal(n) for n in got]:
        return None
    where = next((k for k, (a, b) in enumerate(zip(want, got)) if Decimal(a) != Decimal(b)), min(len(want), len(got)))
    return (f"the numbers differ from the page's, first at number {where + 1}:\n"
            f"  the page: {' '.join(want)}\n  the run:  {' '.join(got)}")


# ---------------------------------------------------------------------------- running
def run(example: Example, workdir: Path) -> tuple:
    """(exit status, stdout and stderr merged) of the example run in ``workdir``; a run
    longer than its timeout is killed with its process group."""
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(PATH=f"{SCRIPTS}{os.pathsep}{env.get('PATH', '')}", PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    proc = subprocess.Popen(["bash", "-c", "set -euo pipefail\n" + example.script], cwd=workdir, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=example.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out.decode("utf-8", "replace")
    return proc.returncode, out.decode("utf-8", "replace")


EXAMPLES, ERRORS = collect()


@pytest.fixture(scope="module")
def started(request, tmp_path_factory):
    """The selected examples started at once, WORKERS at a time: id -> Future of run()."""
    selected = [item.callspec.params["example"] for item in request.session.items
                if item.path == Path(__file__) and item.originalname == "test_example"
                and item.callspec.params["example"] is not None]
    pool = ThreadPoolExecutor(max_workers=WORKERS)
    futures: dict[str, Future] = {}
    # the slow ones first (they say so with a timeout): the run ends sooner
    for example in sorted(selected, key=lambda e: -e.timeout):
        if example.skip is None:
            workdir = tmp_path_factory.mktemp(re.sub(r"\W+", "-", example.id))
            futures[example.id] = pool.submit(run, example, workdir)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("example", EXAMPLES or [None], ids=lambda e: e.id if e else "none")
def test_example(example, started):
    assert example is not None, "no marked example found in README.md and docs/*.md: the test would check nothing"
    if example.skip is not None:
        pytest.skip(f"{example.id}: {example.skip}")
    status, printed = started[example.id].result()
    assert status is not None, f"{example.id}: ran longer than {example.timeout:g} s (timeout=); it printed:\n{printed}"
    assert status == 0, f"{example.id}: exited with status {status}; it printed:\n{printed}"
    problems = [f"{example.page}:{output.line}: {problem}" for output in example.outputs
                if (problem := compare(output, printed)) is not None]
    assert not problems, ("\n\n".join(problems) + f"\n\n{example.id} printed (update the page to it, "
                          f"see docs/development.md, 'Runnable examples'):\n{printed}")


def test_markers_are_well_formed():
    assert not ERRORS, "\n".join(ERRORS)


def test_the_pages_keep_their_checked_examples():
    checked = {e.page for e in EXAMPLES if e.skip is None}
    missing = [page for page in MUST_HAVE if page not in checked]
    assert not missing, f"no runnable example is checked in {missing} any more"


# ---------------------------------------------------------------------------- the markers themselves
PAGE = """\
Intro.

<!-- runnable timeout=5 -->
```sh
printf 'iteration 1: BLEU = 0.25, 0.31 s\\nx 1e-05 LM0 v1.2\\n'
```
<!-- output mask='[0-9.]+ s$' -->
```text
iteration 1: BLEU = 0.25, 7.00 s
x 1e-05 LM0 v1.2
```

The first line's BLEU and time are checked above; the second line's number is
<!-- output numbers only='^x ' -->
0.00001 (compared by value).

```md
<!-- runnable -->
not a marker: inside a fenced block
```
<!-- runnable cmd='echo 3' skip='needs a real decoder' -->
"""


def test_parse_and_compare_a_page():
    (example, skipped) = parse_page(PAGE, "page.md")
    assert (example.line, example.timeout, example.skip) == (3, 5.0, None)
    assert example.script.startswith("printf") and [o.line for o in example.outputs] == [7, 14]
    assert (skipped.script, skipped.skip, skipped.outputs) == ("echo 3", "needs a real decoder", [])
    printed = "iteration 1: BLEU = 0.25, 0.31 s\nx 1e-05 LM0 v1.2\n"
    assert [compare(o, printed) for o in example.outputs] == [None, None]
    assert "-x 1e-05" in compare(example.outputs[0], printed.replace("1e-05", "2e-05"))
    assert "first at number 1" in compare(example.outputs[1], printed.replace("1e-05", "1e-06"))
    # numbers are compared by value: 0.250 is 0.25, 1e-5 is 0.00001, 1.0 is not 1.01
    assert numbers("a 0.250 b 1e-5 c LM0 d v1.2.3 −2 e 3.") == ["0.250", "1e-5", "-2", "3"]
    status, out = run(example, Path("/"))
    assert status == 0 and compare(example.outputs[0], out) is None


@pytest.mark.parametrize("text, message", [
    ("<!-- runnable -->\nplain text\n", "right before a ```sh block"),
    ("<!-- runnable -->\n```python\nx\n```\n", "right before a ```sh block"),
    ("<!-- runnable tmeout=3 -->\n```sh\nx\n```\n<!-- output -->\n```\nx\n```\n", "unknown runnable option 'tmeout'"),
    ("<!-- runnable -->\n```sh\nx\n```\n", "checks nothing"),
    ("<!-- output -->\n```\nx\n```\n", "without a runnable marker"),
    ("<!-- runnable -->\n```sh\nx\n```\n<!-- output -->\nsome prose 1\n", "needs 'numbers'"),
    ("<!-- runnable -->\n```sh\nx\n```\n<!-- output ignore='(' -->\n```\nx\n```\n", "not a regular expression"),
    ("<!-- runnable\n  timeout=3 -->\n", "a marker is one line"),
    ("<!-- runnable -->\n```sh\nx\n", "never closed"),
])
def test_malformed_markers_are_errors(text, message):
    with pytest.raises(MarkerError, match=re.escape(message)):
        parse_page(text, "page.md")


def test_timeout_kills_the_example():
    status, _ = run(Example("page.md", 1, "sleep 30 & sleep 30", timeout=0.5), Path("/"))
    assert status is None
