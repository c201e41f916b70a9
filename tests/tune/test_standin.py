"""The stand-in decoder's own behaviour (mtplug/tuning/standin.py): both front ends."""

from __future__ import annotations

import ast
import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "mtplug" / "tuning" / "standin.py"
POOL = REPO / "mtplug" / "data" / "example" / "run1.best100.out.gz"
WEIGHTS = ("Distortion 0.3\nLanguageModel 0.5\nWordPenalty -1\nPhrasePenalty 0.2\n"
           "PhraseModel_0 0.2\nPhraseModel_1 0.2\nPhraseModel_2 0.2\nPhraseModel_3 0.2\n")


def standin(*args, stdin="", cwd=None, by_position=True):
    """Run the stand-in as dtrain does (python -S on the file: it must not need site or mtplug);
    ``by_position``: plain input line i is pool sentence i unless -standin-source is given."""
    env = {**os.environ, "STANDIN_BY_POSITION": "1" if by_position else "0"}
    return subprocess.run([sys.executable, "-S", str(STANDIN), *map(str, args)], input=stdin, capture_output=True,
                          text=True, cwd=cwd, timeout=60, env=env)


def test_help_and_no_sentence_lookup(cdec, tmp_path):
    """Issue 19, defect 11: a shard's line 0 is not the set's sentence 0, so the stand-in
    refuses to guess instead of decoding the wrong sentences; it has --help."""
    for args in (["--help"], ["moses", "-h"], ["cdec", "--help"]):
        p = standin(*args)
        assert p.returncode == 0 and p.stdout.startswith("usage: python -m mtplug.tuning.standin")
        assert "-standin-source FILE" in p.stdout and "-standin-by-position" in p.stdout
    p = standin("cdec", "-c", cdec / "cdec.ini", "-k", "1", stdin="source 7\n", by_position=False)
    assert p.returncode == 1 and "give -standin-source FILE" in p.stderr and p.stdout == ""
    w = "Distortion0= 0.3 LM0= 0.5 WordPenalty0= -1 PhrasePenalty0= 0.2 TranslationModel0= 0.2 0.2 0.2 0.2"
    p = standin("moses", "-weight-overwrite", w, "-input-file", cdec / "src", by_position=False)
    assert p.returncode == 1 and "give -standin-source FILE" in p.stderr
    # <seg id="N"> lines name their sentence: no lookup needed
    p = standin("cdec", "-c", cdec / "cdec.ini", "-k", "1", stdin='<seg id="7">x</seg>\n', by_position=False)
    assert p.returncode == 0 and p.stdout.startswith("7 ||| ")


def test_shards_decode_their_own_sentences_with_a_source(cdec, tmp_path):
    """The second shard of a set (lines 30..59) gets the pool's sentences 30..59."""
    lines = [f"source {i}" for i in range(60)]
    whole = kbest(cdec, "-k", "1", stdin="".join(x + "\n" for x in lines))
    shard = kbest(cdec, "-k", "1", stdin="".join(x + "\n" for x in lines[30:]))
    assert [r[1:] for r in shard] == [r[1:] for r in whole[30:]]


@pytest.fixture
def cdec(tmp_path):
    (tmp_path / "cdec.ini").write_text("# a comment\nformalism=scfg\n\nadd_pass_through_rules=true\n")
    (tmp_path / "weights").write_text(WEIGHTS)
    (tmp_path / "src").write_text("".join(f"source {i}\n" for i in range(60)))
    return tmp_path


def kbest(cdec, *extra, stdin):
    p = standin("cdec", "-c", cdec / "cdec.ini", "-w", cdec / "weights", "-standin-source", cdec / "src", *extra,
                stdin=stdin)
    assert p.returncode == 0, p.stderr
    return [line.split(" ||| ") for line in p.stdout.splitlines()]


def test_cdec_ids_follow_cdec_counting(cdec):
    rows = kbest(cdec, "-k", "2", "-r", stdin='source 3\n<seg id="9">anything</seg>\nsource 4\n')
    assert [r[0] for r in rows] == ["0", "0", "9", "9", "10", "10"]
    # seg id 9 decodes pool sentence 9; the plain line after it is found in the source file
    alone = kbest(cdec, "-k", "2", "-r", stdin="source 9\nsource 4\n")
    assert [r[1:] for r in rows[2:]] == [r[1:] for r in alone]
    assert [r[1:] for r in rows[:2]] == [r[1:] for r in kbest(cdec, "-k", "2", stdin="source 3\n")]


def test_cdec_kbest_format(cdec):
    rows = kbest(cdec, "-k", "100", "-r", stdin="source 0\n")
    assert len(rows) == 100 and all(len(r) == 4 for r in rows)
    names = {tok.rsplit("=", 1)[0] for r in rows for tok in r[2].split()}
    assert names <= {"Distortion", "LanguageModel", "WordPenalty", "PhrasePenalty", "PhraseModel_0",
                     "PhraseModel_1", "PhraseModel_2", "PhraseModel_3"} and "LanguageModel" in names
    assert any("Distortion=" not in r[2] for r in rows)  # zero values are left out, as cdec does
    w = dict(line.split() for line in WEIGHTS.splitlines())
    scores = [float(r[3]) for r in rows]
    for r, score in zip(rows, scores):
        wf = sum(float(w[n]) * float(v) for n, v in (tok.rsplit("=", 1) for tok in r[2].split()))
        assert score == pytest.approx(wf, rel=1e-5, abs=1e-5)
    assert scores == sorted(scores, reverse=True)
    assert not rows[0][1].endswith(" ")


def test_cdec_one_best_without_k(cdec):
    p = standin("cdec", "-c", cdec / "cdec.ini", "-w", cdec / "weights", stdin="x\ny\n")
    assert p.returncode == 0, p.stderr
    top = kbest(cdec, "-k", "1", stdin="source 0\nsource 1\n")
    assert p.stdout.splitlines() == [r[1] for r in top]   # positions 0 and 1 without a source file


@pytest.mark.parametrize("args, ini, message", [
    (["-k", "2"], "formalism scfg\n", "cdec.ini:1: expected 'key=value'"),
    (["-k", "two"], "a=b\n", "-k: bad size 'two'"),
    (["--bogus"], "a=b\n", "unknown argument '--bogus'"),
])
def test_cdec_bad_input(cdec, args, ini, message):
    (cdec / "cdec.ini").write_text(ini)
    p = standin("cdec", "-c", cdec / "cdec.ini", *args, stdin="x\n")
    assert p.returncode == 1 and message in p.stderr


def test_cdec_unknown_source_line(cdec):
    p = standin("cdec", "-c", cdec / "cdec.ini", "-standin-source", cdec / "src", stdin="not a source\n")
    assert p.returncode == 1 and "'not a source' is not in" in p.stderr


def test_moses_nbest_is_verbatim_and_deterministic(tmp_path):
    (tmp_path / "in").write_text("a\nb\n")
    args = ["moses", "-weight-overwrite", "Distortion0= 0.3 LM0= 0.5 WordPenalty0= -1 PhrasePenalty0= 0.2 "
            "TranslationModel0= 0.2 0.2 0.2 0.2", "-n-best-list", "nb", "3", "distinct", "-input-file", "in"]
    first = standin(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    nb = (tmp_path / "nb").read_text()
    again = standin(*args, cwd=tmp_path)
    assert again.stdout == first.stdout and (tmp_path / "nb").read_text() == nb
    pool = {line.split(" ||| ")[1]: line.split(" ||| ")[2] for line in gzip.open(POOL, "rt") if line.startswith("0 ")}
    for line in nb.splitlines()[:3]:
        sid, text, feats, _ = line.split(" ||| ")
        assert sid == "0" and text in pool and feats == pool[text].strip()  # text with its trailing space


# ------------------------------------------------------------------ a small pool of our own
#: sentences 0..4, their lines interleaved; sentence 0 has a duplicate string ("a b", pool
#: lines 1 and 3) and ties: with F0 and LM0 weighing 1, "d" (4) beats "a b", "a b", "c" (3 each)
SMALL_POOL = ("0 ||| a b  ||| F0= 1 LM0= 2 ||| 0\n"
              "1 ||| x  ||| F0= 1 LM0= 0 ||| 0\n"
              "0 ||| a b  ||| F0= 1 LM0= 2 ||| 0\n"
              "2 ||| p  ||| F0= 1 LM0= 1 ||| 0\n"
              "0 ||| c  ||| F0= 0 LM0= 3 ||| 0\n"
              "3 ||| q  ||| F0= 1 LM0= 1 ||| 0\n"
              "1 ||| y  ||| F0= 2 LM0= 0 ||| 0\n"
              "4 ||| r  ||| F0= 1 LM0= 1 ||| 0\n"
              "0 ||| d  ||| F0= 2 LM0= 2 ||| 0")  # no final newline


@pytest.fixture
def small(cdec):
    (cdec / "small.pool").write_text(SMALL_POOL)
    (cdec / "small.w").write_text("# F0: not a cdec name, so F0_0\nF0_0\t1\nLanguageModel=1\nunused 5\n")
    return cdec


def small_kbest(small, *extra, stdin):
    p = standin("cdec", "-c", small / "cdec.ini", "-w", small / "small.w", "-standin-pool", small / "small.pool",
                *extra, stdin=stdin)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_cdec_ties_keep_pool_order_and_r_drops_repeated_strings(small):
    assert small_kbest(small, "-k", "3", stdin="s0\n") == (
        "0 ||| d ||| F0_0=2 LanguageModel=2 ||| 4\n"
        "0 ||| a b ||| F0_0=1 LanguageModel=2 ||| 3\n"
        "0 ||| a b ||| F0_0=1 LanguageModel=2 ||| 3\n")
    assert small_kbest(small, "-k", "3", "--unique_k_best", stdin="s0\n") == (
        "0 ||| d ||| F0_0=2 LanguageModel=2 ||| 4\n"
        "0 ||| a b ||| F0_0=1 LanguageModel=2 ||| 3\n"
        "0 ||| c ||| LanguageModel=3 ||| 3\n")            # zero F0 left out
    # sentence 1's lines are apart from each other; the weights file's '#' line, TAB and '='
    # separators are read; a missing weight is 0
    assert small_kbest(small, "--k_best", "5", stdin="s0\ns1\n").splitlines()[-2:] == [
        "1 ||| y ||| F0_0=2 ||| 2", "1 ||| x ||| F0_0=1 ||| 1"]
    assert small_kbest(small, stdin="s0\ns1\n") == "d\ny\n"   # no -k: the plain 1-best
    assert small_kbest(small, "-k", "0", stdin="s0\ns1\n") == "d\ny\n"


def test_cdec_one_sentence_or_many_decode_alike(small):
    """A few sentences are looked up in the pool's bytes, more by splitting it: the same lists."""
    many = small_kbest(small, "-k", "10", stdin="".join(f'<seg id="{i}">s</seg>\n' for i in (4, 0, 3, 1, 2)))
    for i in range(5):
        alone = small_kbest(small, "-k", "10", stdin=f'<seg id="{i}" grammar="g{i}.gz">s</seg>\n')
        assert alone and alone.splitlines() == [ln for ln in many.splitlines() if ln.startswith(f"{i} |||")]


def test_cdec_gzip_pool_reads_as_the_plain_one(small):
    data = SMALL_POOL.encode()
    (small / "small.pool.gz").write_bytes(gzip.compress(data[:100]) + gzip.compress(data[100:]))  # 2 members
    (small / "small.pool").write_bytes(gzip.compress(data))    # gzip whatever the name
    args = ["-c", small / "cdec.ini", "-w", small / "small.w", "-k", "10"]
    plain = standin("cdec", *args, "-standin-pool", small / "small.pool", stdin="a\nb\n")
    two = standin("cdec", *args, "-standin-pool", small / "small.pool.gz", stdin="a\nb\n")
    assert plain.returncode == two.returncode == 0 and plain.stdout == two.stdout
    assert plain.stdout == small_kbest(small, "-k", "10", stdin="a\nb\n")


def test_cdec_pool_and_source_from_the_environment_and_deterministic(small, monkeypatch):
    monkeypatch.setenv("STANDIN_POOL", str(small / "small.pool"))
    (small / "src5").write_text("zero\none\ntwo\n")
    monkeypatch.setenv("STANDIN_SOURCE", str(small / "src5"))
    argv = ["cdec", "-c", small / "cdec.ini", "-w", small / "small.w", "-k", "2"]
    runs = [standin(*argv, stdin="two\nzero\n") for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == ("0 ||| p ||| F0_0=1 LanguageModel=1 ||| 2\n"
                                                "1 ||| d ||| F0_0=2 LanguageModel=2 ||| 4\n"
                                                "1 ||| a b ||| F0_0=1 LanguageModel=2 ||| 3\n")


def test_module_and_script_are_the_same_program(cdec):
    args = ["cdec", "-c", cdec / "cdec.ini", "-w", cdec / "weights", "-k", "3", "-standin-source", cdec / "src"]
    script = standin(*args, stdin="source 5\n")
    module = subprocess.run([sys.executable, "-m", "mtplug.tuning.standin", *map(str, args)], input="source 5\n",
                            capture_output=True, text=True, cwd=REPO, timeout=60)
    assert script.returncode == module.returncode == 0 and script.stdout == module.stdout
    tree = ast.parse(STANDIN.read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "mtplug" not in imported
    if hasattr(sys, "stdlib_module_names"):  # Python 3.10+
        assert imported <= set(sys.stdlib_module_names) | {"__future__"}


@pytest.mark.parametrize("args, stdin, message", [
    ([], "x\n", "no -c cdec.ini given"),
    (["-c", "missing.ini"], "x\n", "missing.ini"),
    (["-c", "{d}/cdec.ini", "-k", "-1"], "x\n", "-k: bad size '-1'"),
    (["-c", "{d}/cdec.ini", "-k"], "x\n", "-k needs a value"),
    (["-c", "{d}/cdec.ini"], '<seg id="60">x</seg>\n', "(pool sentence 60) has no hypotheses in the pool"),
    (["-c", "{d}/cdec.ini", "-w", "{d}/cdec.ini"], "x\n", "cdec.ini:2: bad value 'scfg'"),
    (["-c", "{d}/cdec.ini", "-w", "{d}/src", "-standin-pool", "{d}/bad.pool"], "x\n",
     "bad.pool:2: expected 'id ||| hyp ||| features ||| score'"),
    (["-c", "{d}/cdec.ini", "-standin-pool", "{d}/bad.pool"], '<seg id="1">a</seg>\n',
     "bad.pool:3: could not convert string to float: 'x'"),
    (["-c", "{d}/cdec.ini", "-standin-pool", "{d}/bad.pool"], '<seg id="2">a</seg>\n',
     "bad.pool:4: value '1' before any label"),
])
def test_cdec_bad_input_more(cdec, args, stdin, message):
    (cdec / "bad.pool").write_text("1 ||| fine ||| A= 1 ||| 1\n0 ||| broken\n1 ||| bad ||| A= x ||| 0\n"
                                   "2 ||| bad ||| 1 A= 2 ||| 0\n")
    p = standin("cdec", *(a.format(d=cdec) for a in args), stdin=stdin, cwd=cdec)
    assert p.returncode == 1 and message in p.stderr and p.stderr.count("\n") == 1, p.stderr


# ------------------------------------------------------------------ Moses front end
def test_moses_distinct_ties_and_verbatim_text_on_a_small_pool(small):
    (small / "in").write_text("s0\ns1\n")
    p = standin("moses", "-weight-overwrite", "F0= 1 LM0= 1", "-n-best-list", "nb", "3", "distinct",
                "-input-file", "in", "-standin-pool", "small.pool", "-inputtype", "0", cwd=small)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "d\ny\n"          # the 1-best without Moses's trailing space
    assert (small / "nb").read_text() == ("0 ||| d  ||| F0= 2 LM0= 2 ||| 4\n"
                                          "0 ||| a b  ||| F0= 1 LM0= 2 ||| 3\n"
                                          "0 ||| c  ||| F0= 0 LM0= 3 ||| 3\n"
                                          "1 ||| y  ||| F0= 2 LM0= 0 ||| 2\n"
                                          "1 ||| x  ||| F0= 1 LM0= 0 ||| 1\n")
    p = standin("moses", "-weight-overwrite", "F0= 1 LM0= 1", "-n-best-list", "nb", "3", "-input-file", "in",
                "-standin-pool", "small.pool", cwd=small)
    assert (small / "nb").read_text().splitlines()[:3] == [
        "0 ||| d  ||| F0= 2 LM0= 2 ||| 4", "0 ||| a b  ||| F0= 1 LM0= 2 ||| 3", "0 ||| a b  ||| F0= 1 LM0= 2 ||| 3"]


def test_moses_show_weights_and_sparse_from_the_environment(small, monkeypatch):
    (small / "moses.ini").write_text("[feature]\nLM0\n[weight]\nF0= 0.5\nLM0= -1  # lm\nUnknownWordPenalty0= 1\n")
    p = standin("moses", "-f", "moses.ini", "-show-weights", "-standin-pool", "small.pool", cwd=small)
    assert p.returncode == 0 and p.stdout == "F0= 0.500000\nLM0= -1.000000\nUnknownWordPenalty0 UNTUNEABLE\n"
    (small / "in").write_text("s0\ns1\n")
    monkeypatch.setenv("STANDIN_SPARSE", "1")
    (small / "sparse.w").write_text("WT_x~x 10\n")
    p = standin("moses", "-config", "moses.ini", "-weight-file", "sparse.w", "-n-best-list", "nb", "2",
                "-input-file", "in", "-standin-pool", "small.pool", cwd=small)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "d\nx\n"   # the config's weights and the sparse one: x 0.5 - 0 + 10
    assert (small / "nb").read_text() == ("0 ||| d  ||| F0= 2 LM0= 2 WT_d~x= 1 ||| -1\n"
                                          "0 ||| a b  ||| F0= 1 LM0= 2 WT_a~x= 1 WT_b~y= 1 ||| -1.5\n"
                                          "1 ||| x  ||| F0= 1 LM0= 0 WT_x~x= 1 ||| 10.5\n"
                                          "1 ||| y  ||| F0= 2 LM0= 0 WT_y~x= 1 ||| 1\n")


@pytest.mark.parametrize("args, message", [
    (["-weight-overwrite", "F0= 1", "-input-file", "in"], "no weight for feature LM0"),
    (["-weight-overwrite", "F0= 1 2 LM0= 1", "-input-file", "in"], "feature F0 has 1 values but 2 weights"),
    (["-weight-overwrite", "F0= nan LM0= 1", "-input-file", "in"], "weight of F0 is not finite"),
    (["-weight-overwrite", "F0= x LM0= 1", "-input-file", "in"], "bad weight value 'x' of F0"),
    (["-weight-overwrite", "F0= 1 LM0= 1"], "no -input-file given"),
    (["-input-file", "in"], "no weights: give -config or -weight-overwrite"),
    (["-f", "moses.ini", "-show-weights"], "no weight for feature LM0 in moses.ini"),
    (["-weight-overwrite", "F0= 1 LM0= 1", "-input-file", "long"], "long has 6 sentences, the pool only 5"),
    (["-weight-overwrite", "F0= 1 LM0= 1", "-input-file", "in", "-standin-source", "in2"], "'s1' is not in in2"),
    (["-weight-overwrite", "F0= 1 LM0= 1", "-input-file", "in", "-n-best-list", "nb"], "-n-best-list needs a value"),
    (["-weight-overwrite", "F0= 1 LM0= 1", "-input-file", "in", "-threads"], "-threads needs a value"),
    (["--bogus"], "unknown argument '--bogus'"),
])
def test_moses_bad_input(small, args, message):
    (small / "in").write_text("s0\ns1\n")
    (small / "in2").write_text("s0\n")
    (small / "long").write_text("a\nb\nc\nd\ne\nf\n")
    (small / "moses.ini").write_text("[weight]\nF0= 1\n")
    p = standin("moses", "-standin-pool", "small.pool", *args, cwd=small)
    assert p.returncode == 1 and message in p.stderr and p.stderr.count("\n") == 1, p.stderr
