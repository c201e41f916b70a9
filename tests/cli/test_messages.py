"""Messages (issue 37, "One interface"): a reference with a line too many is blamed, not
the n-best list; invalid UTF-8 is shown escaped once, with how to convert the file; one
bad value has one wording in every command (mtplug.validation)."""

from __future__ import annotations

import pytest

import mtplug
from mtplug.cli import EXIT_INPUT_ERROR, main

NBEST = ("0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| 0\n"
         "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n")
REF = "a b c\nx y\n"
ICONV = "if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8"


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


@pytest.fixture
def files(write, tmp_path):
    return {"nbest": write("nbest", NBEST), "ref": write("ref", REF), "init": write("init", "0.5 0.2 0.2\n"),
            "out": str(tmp_path / "out")}


# ---------------------------------------------------------------- the reference file is blamed
def test_a_reference_with_one_line_too_many_is_named_with_both_counts(files, write, capsys):
    long_ref = write("ref.long", REF + "one more line\n")
    assert main(["optimize", "none", "-q", "--nbest", files["nbest"], "--ref", long_ref, "--weights",
                 files["init"], "-o", files["out"]]) == EXIT_INPUT_ERROR
    assert one_error(capsys) == (f"mtplug: error: {long_ref}: has 3 lines, expected 2: one per sentence of the "
                                 f"n-best lists ({files['nbest']}), whose last sentence is 1 (unless the lists "
                                 "lack their last sentences)")


def test_several_references_and_a_devset_are_named_too(files, write, capsys):
    a, b = write("ref.a", REF + "x\n"), write("ref.b", REF + "y\n")
    assert main(["optimize", "none", "-q", "--nbest", files["nbest"], "--ref", a, b, "--weights", files["init"],
                 "-o", files["out"]]) == EXIT_INPUT_ERROR
    assert one_error(capsys).startswith(f"mtplug: error: {a}, {b}: have 3 lines, expected 2: ")
    devset = write("devset", "s0 ||| a b c\ns1 ||| x y\ns2 ||| z\n")
    assert main(["optimize", "none", "-q", "--nbest", files["nbest"], "--devset", devset, "--weights",
                 files["init"], "-o", files["out"]]) == EXIT_INPUT_ERROR
    assert one_error(capsys).startswith(f"mtplug: error: {devset}: has 3 lines, expected 2: ")


def test_in_python_too(files, write):
    corpus = mtplug.load_nbest([files["nbest"]], refs=[write("ref.long", REF + "z\n")])
    with pytest.raises(mtplug.InputError, match=r"ref.long: has 3 lines, expected 2: one per sentence of the "
                                                r"n-best lists, whose last sentence is 1"):
        mtplug.optimize("none", corpus, files["init"])


def test_a_sentence_missing_inside_the_lists_still_blames_them(files, write, capsys):
    gap = write("gap", NBEST.replace("1 |||", "2 |||"))
    assert main(["optimize", "none", "-q", "--nbest", gap, "--ref", write("ref3", REF + "z\n"), "--weights",
                 files["init"], "-o", files["out"]]) == EXIT_INPUT_ERROR
    assert one_error(capsys) == f"mtplug: error: {gap}: sentence 1 has no hypotheses (1 of 3 sentences are empty)"


# ---------------------------------------------------------------- invalid UTF-8
def test_invalid_utf8_in_a_reference_is_escaped_once_and_suggests_iconv(files, write, capsys):
    ref = write("ref.latin1", "a b c\nx y caf\xe9\n".encode("latin-1"))
    assert main(["score", "--hyp", files["ref"], "--ref", ref]) == EXIT_INPUT_ERROR
    line = one_error(capsys)
    assert line == f"mtplug: error: {ref}:2: invalid UTF-8 at byte 7: 'x y caf\\xe9'; {ICONV}"
    assert "\\\\" not in line


def test_invalid_utf8_in_an_nbest_list(files, write, capsys):
    nbest = write("nb.latin1", "0 ||| a caf\xe9 ||| LM0= -1 TM0= 1 2 ||| 0\n".encode("latin-1"))
    assert main(["optimize", "none", "-q", "--nbest", nbest, "--ref", files["ref"], "--weights", files["init"],
                 "-o", files["out"]]) == EXIT_INPUT_ERROR
    assert one_error(capsys) == f"mtplug: error: {nbest}:1: invalid UTF-8 in 'caf\\xe9'; {ICONV}"


# ---------------------------------------------------------------- one wording per bad value
THREADS = "must be a thread count >= 1 (leave it out for all cores), got 0"
SEED = "must be an integer in [0, 2^63), got -1"


@pytest.fixture
def commands(files, write, tmp_path):
    """argv prefixes of every command that takes --threads / --seed / a count."""
    ini = write("moses.ini", "[weight]\nLM0= 0.5\nTM0= 0.2 0.2\n")
    dtrain_ini = write("dtrain.ini", f"input={files['ref']}\nrefs={files['ref']}\ndecoder_config=cdec.ini\n")
    return {
        "optimize": ["optimize", "mert", "-q", "--nbest", files["nbest"], "--ref", files["ref"], "--weights",
                     files["init"], "-o", files["out"]],
        "tune": ["tune", "-q", "--decoder", "moses", "--decoder-bin", "false", "--decoder-config", ini, "--input",
                 files["ref"], "--ref", files["ref"], "--workdir", str(tmp_path / "wd")],
        "evaluate": ["evaluate", "-q", "--ref", files["ref"], "--hyps-baseline", files["ref"]],
        "compare": ["compare", "-q", "study.yaml"],
        "dtrain": ["dtrain", "-q", "-c", dtrain_ini, "--decoder-bin", "false"],
        "kbest": ["kbest", "-q", "--forests", "f", "--weights", files["init"]],
        "rerank": ["rerank", "-q", "--nbest", files["nbest"], "--weights", files["init"]],
    }


@pytest.mark.parametrize("command, extra, message", [
    ("optimize", ["--threads", "0"], "--threads " + THREADS),
    ("tune", ["--threads", "0"], "--threads " + THREADS),
    ("evaluate", ["--threads", "0"], "--threads " + THREADS),
    ("compare", ["--threads", "0"], "--threads " + THREADS),
    ("optimize", ["--seed", "-1"], "--seed " + SEED),
    ("tune", ["--seed", "-1"], "--seed " + SEED),
    ("evaluate", ["--seed", "-1"], "--seed " + SEED),
    ("dtrain", ["--seed", "-1"], "--seed " + SEED),
    ("tune", ["--iterations", "0"], "--iterations must be an integer >= 1, got 0"),
    ("tune", ["--nbest-size", "0"], "--nbest-size must be an integer >= 1, got 0"),
    ("kbest", ["--nbest-size", "0"], "--nbest-size must be an integer >= 1, got 0"),
    ("rerank", ["--nbest-size", "0", "--output-nbest", "-"], "--nbest-size must be an integer >= 1, got 0"),
    ("dtrain", ["--nbest-size", "0"], "--nbest-size must be an integer >= 1, got 0"),
    ("dtrain", ["--epochs", "0"], "--epochs must be an integer >= 1, got 0"),
    ("dtrain", ["--jobs", "0"], "--jobs must be an integer >= 1, got 0"),
    ("evaluate", ["--boot-samples", "0"], "--boot-samples must be an integer >= 1, got 0"),
])
def test_one_bad_value_one_wording(commands, capsys, command, extra, message):
    assert main([*commands[command], *extra]) == EXIT_INPUT_ERROR
    line = one_error(capsys)
    assert line.split(": error: ", 1)[1].startswith(message), line


def test_the_yaml_files_and_python_use_the_same_words(files, write, capsys):
    from mtplug.tuning.config import TEMPLATE

    yaml_file = write("t.yaml", TEMPLATE.replace("threads: null ", "threads: 0    "))
    assert main(["tune", "-q", "--yaml", yaml_file]) == EXIT_INPUT_ERROR
    line = one_error(capsys)
    assert line.startswith(f"mtplug: error: {yaml_file}:") and line.endswith(": threads " + THREADS), line
    corpus = mtplug.load_nbest([files["nbest"]], refs=[files["ref"]])
    with pytest.raises(ValueError, match=r"^threads= must be a thread count >= 1 \(leave it out for all cores\), "
                                         r"got 0$"):
        mtplug.optimize("none", corpus, files["init"], threads=0)
    with pytest.raises(ValueError, match=r"^seed= must be an integer in \[0, 2\^63\), got -1$"):
        mtplug.optimize("none", corpus, files["init"], seed=-1)
