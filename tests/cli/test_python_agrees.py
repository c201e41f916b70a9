"""The Python API says and means what the commands do (issue 37, "One interface"): an
init.opt read without names says how to give them; ``threads=0`` is refused as
``--threads 0`` is, in the same words (None is every core in both)."""

from __future__ import annotations

from pathlib import Path

import pytest

import mtplug
from mtplug.cli import EXIT_INPUT_ERROR, main

REPO = Path(__file__).resolve().parents[2]
THREADS = "must be a thread count >= 1 (leave it out for all cores), got {}"


@pytest.fixture(scope="module")
def corpus(example_data):
    return mtplug.load_nbest([example_data / "run1.best100.out.gz"], refs=[example_data / "ref.0"])


@pytest.mark.parametrize("name", ["run1.init.opt"])
def test_positional_weights_without_names_say_how_to_give_them(example_data, name):
    path = str(example_data / name)
    with pytest.raises(mtplug.InputError) as caught:
        mtplug.read_weights(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: is a Moses init.opt file, whose values name no feature")
    assert "pass feature_names" in message and "corpus.feature_names[:corpus.n_dense]" in message
    assert "docs/formats.md, 'Weights files'" in message
    # the section it points to exists and has the table
    docs = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    section = docs.split("## Weights files", 1)[1].split("\n## ", 1)[0]
    assert "| mert `init.opt` |" in section and "none: by position" in section
    assert "feature_names=corpus.feature_names[:corpus.n_dense]" in section


def test_the_way_the_message_gives_works(example_data, corpus):
    w = mtplug.read_weights(str(example_data / "run1.init.opt"), feature_names=corpus.feature_names[:corpus.n_dense])
    assert list(w)[:2] == ["Distortion0_0", "LM0_0"] and w["LM0_0"] == 0.5


def test_positional_weights_txt_too(write):
    with pytest.raises(mtplug.InputError, match="is a Moses weights.txt file, whose values name no feature"):
        mtplug.read_weights(write("w.txt", "0.5 0.2 0.2\n"), fmt="weights-txt")


@pytest.mark.parametrize("threads", [0, -1])
def test_threads_zero_is_refused_as_the_command_refuses_it(example_data, corpus, tmp_path, capsys, threads):
    with pytest.raises(ValueError) as caught:
        mtplug.optimize("none", corpus, str(example_data / "run1.init.opt"), threads=threads)
    assert str(caught.value) == "threads= " + THREADS.format(threads)
    assert main(["optimize", "none", "-q", "--store", "s.npz", "--weights", "w", "-o", str(tmp_path / "o"),
                 "--threads", str(threads)]) == EXIT_INPUT_ERROR
    assert f"--threads {THREADS.format(threads)}" in capsys.readouterr().err


def test_threads_none_is_every_core_as_leaving_the_flag_out(example_data, corpus, tmp_path, capsys):
    start = str(example_data / "run1.init.opt")
    every = mtplug.optimize("mert", corpus, start, seed=2, threads=None, restarts=1)
    one = mtplug.optimize("mert", corpus, start, seed=2, threads=1, restarts=1)
    assert every.weights.tolist() == one.weights.tolist()     # threads change nothing but the speed


def test_seed_is_checked_in_the_commands_words(example_data, corpus):
    with pytest.raises(ValueError, match=r"^seed= must be an integer in \[0, 2\^63\), got -1$"):
        mtplug.optimize("none", corpus, str(example_data / "run1.init.opt"), seed=-1)
