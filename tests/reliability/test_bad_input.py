"""The bad-input contract (docs/bad-input.md): each case prints exactly its message, exits 2, writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import mtplug
from mtplug.cli import EXIT_INPUT_ERROR

from .bad_input_cases import ACCEPTED, CASES, CH_INSIDE, WARNED, page, program, run_case, write_case

REPO = Path(__file__).resolve().parents[2]


def _no_error_lines(lines: list[str]) -> bool:
    return not any(": error:" in line or "Traceback" in line for line in lines)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}: {c.what}" for c in CASES])
def test_case(case, tmp_path, capsys):
    write_case(case, str(tmp_path))
    rc = run_case(case, str(tmp_path))
    out, err = capsys.readouterr()
    err = err.replace(f"{tmp_path}/", "DIR/")
    lines = err.splitlines()
    moses = program(case) != "mtplug"
    if case.message.startswith(ACCEPTED):
        # the Moses programs log their progress on stderr (mert-moses.pl reads some of it)
        assert rc == 0 and (_no_error_lines(lines) if moses else err == ""), err
        return
    if case.message.startswith(WARNED):   # accepted, with exactly this warning line
        assert rc == 0 and err == case.message[len(WARNED):] + "\n", err
        return
    assert rc == EXIT_INPUT_ERROR, err
    if moses:  # progress lines may come first; the error is the one last line
        assert lines and _no_error_lines(lines[:-1]), err
        err = lines[-1] + "\n"
    assert err == f"{case.message}\n"
    assert out == "" and not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


#: the Python API call that reads the same input as a case's command, for the commands whose
#: readers the API shares: it raises InputError with the message of the command's line
API_READS = {
    "m2": lambda d: mtplug.load_plain(f"{d}/hyp", f"{d}/gold.m2", metric="m2"),
    "m2eval": lambda d: mtplug.load_plain(f"{d}/hyp", f"{d}/gold.m2", metric="m2"),
    "nbest": lambda d: mtplug.load_nbest(f"{d}/nbest", f"{d}/ref"),
    "rerank": lambda d: mtplug.load_nbest(f"{d}/nbest"),
}
API_CASES = [c for c in CASES if c.command in API_READS and (c.kind == "M2" or "cut" in c.what or "fields" in c.what)]


@pytest.mark.parametrize("case", API_CASES, ids=[f"{c.kind}: {c.what}" for c in API_CASES])
def test_the_api_raises_the_same_input_error(case, tmp_path):
    write_case(case, str(tmp_path))
    if case.message.startswith((ACCEPTED, WARNED)):
        API_READS[case.command](str(tmp_path))
        return
    with pytest.raises(mtplug.InputError) as err:
        API_READS[case.command](str(tmp_path))
    assert str(err.value).replace(f"{tmp_path}/", "DIR/") == case.message.split(": error: ", 1)[1]


def test_an_error_line_quotes_control_characters():
    """A CR, NUL or ESC copied from a bad line (or in a file name) is shown escaped, as in a
    repr: on a terminal it would move the cursor back over the file name and line number."""
    err = mtplug.InputError("got 'a\rb\x00c\x1b[2K\u2028'", "dir/x\ny", 3)
    assert str(err) == "dir/x\\ny:3: got 'a\\rb\\x00c\\x1b[2K\\u2028'"
    assert err.message == "got 'a\rb\x00c\x1b[2K\u2028'" and err.path == "dir/x\ny"
    # printable text, backslashes included, is kept: escaping twice changes nothing
    assert str(mtplug.InputError(str(err))) == str(err)
    assert str(mtplug.InputError("'x \\xfe' 中文 café")) == "'x \\xfe' 中文 café"


def test_the_page_is_current():
    assert (REPO / "docs" / "bad-input.md").read_text(encoding="utf-8") == page(), \
        "regenerate: python -m tests.reliability.bad_input_cases > docs/bad-input.md"


def test_the_embedded_cdec_forest_is_cdecs(tmp_path):
    """The cdec -O cases corrupt CH_INSIDE: it must be the valid forest cdec wrote (6 nodes, 8 edges)."""
    from mtplug.formats.cdec_forest import read_cdec_forest

    path = tmp_path / "0.bin"
    path.write_bytes(CH_INSIDE)
    hg = read_cdec_forest(path)
    assert (hg.n_nodes, hg.n_edges, sorted(hg.feature_names)) == (6, 8, ["f1", "f2"])
