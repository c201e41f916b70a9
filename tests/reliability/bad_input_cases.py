"""The bad-input contract: every malformed-input case and the exact error the user sees.

One table (:data:`CASES`) drives both the test (tests/reliability/test_bad_input.py:
each case exits with status 2, prints exactly the recorded message, writes nothing;
the inputs accepted on purpose must succeed) and the documentation page docs/bad-input.md, regenerated with::

    python -m tests.reliability.bad_input_cases > docs/bad-input.md

(the test fails when the page is out of date). In messages, ``DIR/`` stands for the
directory of the input files; in file contents (dtrain.ini, tune YAML: files that name
other files) it is replaced by that directory when the case is written. A file name with a
``/`` is written in a sub-directory (``hg/0.gz``); a name ending in ``/`` is an empty directory.
"""

from __future__ import annotations

import base64
import gzip
import math
import struct
import sys
from dataclasses import dataclass

NBEST_LINE = ("0 ||| a b c ||| LM0= -1.5 TM0= 1 2 ||| -1\n", "1 ||| x y ||| LM0= -2 TM0= 0.5 1 ||| -2\n")
GOOD_NBEST = "".join(NBEST_LINE)
KBEST_LINE = ("0 ||| a b c ||| LM=-1.5 TM_0=1 ||| -1\n", "1 ||| x y ||| LM=-2 TM_0=0.5 ||| -2\n")
KBEST_INIT = "LM 0.5\nTM_0 0.2\n"
GOOD_REF = "a b c\nx y z\n"
GOOD_INIT = "0.5 0.2 0.2\n"
GOOD_FEATURES = ("FEATURES_TXT_BEGIN_0 0 1 3 LM0_0 TM0_0 TM0_1\n-1.5 1 2\nFEATURES_TXT_END_0\n"
                 "FEATURES_TXT_BEGIN_0 1 1 3 LM0_0 TM0_0 TM0_1\n-2 0.5 1\nFEATURES_TXT_END_0\n")
GOOD_SCORES = ("SCORES_TXT_BEGIN_0 0 1 9 BLEU\n3 3 2 2 1 1 0 0 3\nSCORES_TXT_END_0\n"
               "SCORES_TXT_BEGIN_0 1 1 9 BLEU\n2 2 1 1 0 0 0 0 3\nSCORES_TXT_END_0\n")
GOOD_KBEST = "".join(KBEST_LINE)
GOOD_SRC = "a b c\nx y\n"
GOOD_SPARSE = "WT_a~b 0.5\nWT_c~d -0.25\n"
GOOD_PRO = "1 F0 0.5 F2 -1 WT_a~b 1 \n0 F0 -0.5 F2 1 WT_a~b -1 \n"
GOOD_DTRAIN = ("# dtrain.ini\ndecoder_config=DIR/cdec.ini\ninput=DIR/src\nrefs=DIR/ref\ninput_weights=DIR/weights\n"
               "output=DIR/out\n")
GOOD_TUNE = ("decoder: moses\ndecoder_bin: 'false'\ndecoder_config: DIR/moses.ini\ninput: DIR/src\nref: [DIR/ref]\n"
             "workdir: DIR/out\n")

# Lattices and forests of the two sentences of GOOD_REF.
PLF_LINE = ("((('a',-1,1),),(('b',-1,1),),(('c',-1,1),),)\n", "((('x',-0.5,1),('q',-1,1),),(('y',-1,1),),)\n")
GOOD_PLF = "".join(PLF_LINE)
SG_LINE = ("0 hyp=0 stack=0\n",
           "0 hyp=1 stack=1 back=0 score=-1 transition=-1 forward=2 fscore=-2 covered=0-0 out=a b\n",
           "0 hyp=2 stack=2 back=1 score=-2 transition=-1 forward=-1 fscore=0 covered=1-1 out=c\n",
           "1 hyp=0 stack=0\n",
           "1 hyp=3 stack=1 back=0 score=-1 transition=-1 forward=-1 fscore=0 covered=0-0 out=x y\n")
GOOD_SG = "".join(SG_LINE)
#: the extended form (-output-search-graph-extended): scores="core=(dense...) sparse=value ..."
SG_EXTENDED = ("0 hyp=0 stack=0 forward=1 fscore=-2\n0 hyp=1 stack=1 back=0 score=-1 transition=-1 forward=-1 "
               'fscore=0 covered=0-0 scores="core=(-1,0.5) WT_a~a=1" out="A|a"\n')
#: an M2 file (grammatical error correction) of the two sentences of the default hypotheses "a b c", "x y"
M2_EDIT = ("A 1 2|||Vform|||b|||REQUIRED|||-NONE-|||0\n", "A 2 2|||Det|||z|||REQUIRED|||-NONE-|||0\n")
GOOD_M2 = "S a q c\n" + M2_EDIT[0] + "\nS x y\n" + M2_EDIT[1] + "\n"
HG_EDGE = "[0] a b c ||| LM0=-1 WordPenalty0=-3 ||| 3\n"
GOOD_HG = ("# target ||| features ||| source-covered\n3 3\n# node 0\n1\n<s> |||  ||| 0\n# node 1\n1\n" + HG_EDGE
           + "# node 2\n1\n[1] </s> |||  ||| 3\n")
GOOD_DENSE = "LM0= 0.5\nWordPenalty0= -0.1\n"
JSON_EDGE = '{"tail":[],"spans":[0,1,-1,-1],"feats":[0,-1.5,1,1],"rule":1}'
GOOD_JSON = ('{"rules":[1,"[X] ||| a ||| a b",2,"[S] ||| [X,1] c ||| [1] c"],"features":["LM","TM"],'
             '"edges":[' + JSON_EDGE + '],"node":{"in_edges":[0],"cat":"X"},'
             '"edges":[{"tail":[0],"spans":[0,2,-1,-1],"feats":[0,-0.5],"rule":2}],"node":{"in_edges":[1],"cat":"S"}}\n')
#: cdec's test forest test-ch-inside.bin.gz (training/dpmert/test_data; ../shared/data/cdec-forests), gzipped
#: again with mtime 0: a Boost binary archive of 1424 bytes, 6 nodes, 8 edges, features f1 and f2
CH_INSIDE = gzip.decompress(base64.b64decode(
    "H4sIAAAAAAACAxNjgIDi1KLMxJzMqsSSzPw8K6vEouSMzLJULgYWDhYORqgaBjYg5mDAAmAqIhixCKKLYSgG0UxQNgsQsyJpYMKmAVmQGUkx"
    "MzbFzHhMZ0HWgK6ICcnX7EiaWLFpQleENYjYEGGBN8QSsQqimrcg8H89CKOGKhtqCDMheQMm6IhfFs5hQo4CEEgznDUTBF7uh4sYQUR27oe5"
    "BhGVbNijDtmuZKyCGEkizQhCf4DbwgSPayawTcyE/OyMXxbFz+jePYnHu8zQ5MIE1s4MdgxKmmJGSnAYYeGEVRmyUqf/QMCE6TJjMPiM4bKT"
    "cJexYHEZK9EuSyLosiQcLoPQD5BcdvYMCHyBu4wVnoVYwK5iIxR5EfhlcUQepkNgqRfmEDY0h7ATckgUflkcDkkDg2cYIfIG7hCQxQ+gsgBu"
    "mhSxkAUAAA=="))
#: weights (kbest) and start weights (optimize --forests) naming the features of every forest above
FOREST_WEIGHTS = "LatticeCost_0 1\ntransition 1\nLM0_0 0.5\nWordPenalty0_0 -0.1\nLM 1\nTM 0.5\nf1 1\nf2 1\n"

ACCEPTED = "(accepted) "
#: accepted (exit 0, output written) with exactly this stderr line
WARNED = "(warning) "


@dataclass
class Case:
    kind: str          # the input kind (a section of the page)
    what: str          # the malformed case
    files: dict        # name -> str or bytes; the good defaults fill the rest
    message: str       # the exact stderr line (DIR/ = the files' directory), or ACCEPTED + why
    command: str = "nbest"  # which command reads the input (see command_line)


#: command kind -> how it reads its input (the "Read by" line of a section)
READ_BY = {
    "nbest": "`mtplug optimize ALGO --nbest NBEST --ref REF --weights INIT`",
    "mertdata": "`mtplug optimize ALGO --ffile FEATURES --scfile SCORES --weights INIT`",
    "score": "`mtplug score --hyp HYP --ref REF`",
    "sparse": "`kbmira --sparse-init FILE` (the same reader serves `mert --sparse-weights` and, for Moses, "
              "`mtplug tune --weights`)",
    "cdecweights": "`mtplug dtrain`, its `input_weights=FILE` (read before the first decoder call)",
    "cdecinit": "`mtplug optimize ALGO --nbest KBEST --weights FILE`",
    "megam": "`megam_i686.opt -fvals -nobias binary FILE`, as mert-moses.pl --pairwise-ranked runs it",
    "dtrain": "`mtplug dtrain --config FILE` (checked before the first decoder call)",
    "tune": "`mtplug tune --yaml FILE` (checked before the working directory is created)",
    "kbest": "`mtplug kbest --forests PATH --weights FILE --nbest-size N`",
    "forestmert": "`mtplug optimize mert --forests PATH --ref REF --weights FILE` (the same for `optimize kbmira`)",
    "hgdir": "`kbmira --hgdir DIR --reference REF --dense-init FILE` (Moses's hypergraph mode; `mtplug kbest "
             "--forests DIR` and `optimize --forests DIR` read the same files)",
    "rerank": "`mtplug rerank --nbest NBEST --weights INIT -o OUT`",
    "evaluate": "`mtplug evaluate --ref REF --hyps-baseline HYP --hyps-sys1 HYP2`",
    "m2": "`mtplug score --metric m2 --hyp HYP --ref M2` (the same reader serves `optimize --metric m2`, "
          "`extractor --sctype M2SCORER` and `mtplug.load_nbest(..., metric=\"m2\")`)",
    "m2eval": "`evaluator --sctype M2SCORER --reference M2 --candidate HYP`",
    "fairseq": "`mtplug optimize ALGO --nbest NBEST --nbest-format fairseq --ref REF --weights WEIGHTS`",
    "fairseqpos": "the same with `--fairseq-positional`",
    "marian": "`mtplug optimize ALGO --nbest NBEST --nbest-format marian --ref REF --weights WEIGHTS`",
    "jsonl": "`mtplug optimize ALGO --nbest NBEST --nbest-format jsonl --ref REF --weights WEIGHTS`",
    "join": "`mtplug join-features --nbest NBEST --feature X=VALUES -o OUT`",
}
#: command kinds run by a Moses program of moses_integration/ (through its entry point,
#: ``python -m mtplug.integrations.moses PROGRAM``), not by ``mtplug``
MOSES_PROGRAMS = {"sparse": "kbmira", "megam": "megam_i686.opt", "hgdir": "kbmira", "m2eval": "evaluator"}
#: the forest inputs a case may give (a file or a directory); the one it gives is --forests
FOREST_INPUTS = ("lattices.plf", "search.graph", "forests", "hg")


def program(case: Case) -> str:
    """``mtplug``, or the Moses program that reads ``case``'s input."""
    return MOSES_PROGRAMS.get(case.command, "mtplug")


def command_line(case: Case, d: str) -> list[str]:
    """The arguments of :func:`program` that read ``case``'s files from directory ``d`` (outputs in d/out)."""
    p = lambda name: f"{d}/{name}"  # noqa: E731
    if case.command == "nbest":
        return ["optimize", "none", "-q", "--nbest", p("nbest"), "--ref", p("ref"), "--weights", p("init"),
                "--output", p("out")]
    if case.command == "mertdata":
        return ["optimize", "none", "-q", "--ffile", p("features.dat"), "--scfile", p("scores.dat"),
                "--weights", p("init"), "--output", p("out")]
    if case.command == "score":
        return ["score", "-q", "--hyp", p("hyp"), "--ref", p("ref")]
    if case.command == "sparse":
        return ["--dense-init", p("init"), "--sparse-init", p("sparse"), "--ffile", p("features.dat"),
                "--scfile", p("scores.dat"), "--iters", "1", "-o", p("out")]
    if case.command == "megam":
        return ["-fvals", "-maxi", "30", "-nobias", "-quiet", "binary", p("pro.data")]
    if case.command == "cdecinit":
        return ["optimize", "none", "-q", "--nbest", p("kbest"), "--ref", p("ref"), "--weights", p("weights"),
                "--output", p("out")]
    if case.command in ("dtrain", "cdecweights"):
        # 'false' as the decoder: a case that got past the reading would fail on the first call
        return ["dtrain", "-q", "--config", p("dtrain.ini"), "--decoder-bin", "false"]
    if case.command == "tune":
        return ["tune", "-q", "--yaml", p("tune.yaml")]
    if case.command == "kbest":
        return ["kbest", "-q", "--forests", p(forest_input(case)), "--weights", p("forest.weights"), "--nbest-size", "2",
                "--output", p("out")]
    if case.command == "forestmert":
        return ["optimize", "mert", "-q", "--forests", p(forest_input(case)), "--ref", p("ref"),
                "--weights", p("forest.weights"), "--output", p("out")]
    if case.command == "hgdir":
        return ["--hgdir", p("hg"), "--reference", p("ref"), "--dense-init", p("dense"), "--iters", "1",
                "-o", p("out")]
    if case.command == "rerank":
        return ["rerank", "-q", "--nbest", p("nbest"), "--weights", p("init"), "--output", p("out")]
    if case.command == "fairseqpos":
        return ["optimize", "none", "-q", "--nbest", p("nbest"), "--nbest-format", "fairseq", "--fairseq-positional",
                "--ref", p("ref"), "--weights", p("neural.weights"), "--output", p("out")]
    if case.command in ("fairseq", "marian", "jsonl"):
        return ["optimize", "none", "-q", "--nbest", p("nbest"), "--nbest-format", case.command, "--ref", p("ref"),
                "--weights", p("neural.weights"), "--output", p("out")]
    if case.command == "join":
        return ["join-features", "-q", "--nbest", p("nbest"), "--feature", f"X={p('values')}", "--output", p("out")]
    if case.command == "m2":
        return ["score", "-q", "--metric", "m2", "--hyp", p("hyp"), "--ref", p("gold.m2")]
    if case.command == "m2eval":
        return ["--sctype", "M2SCORER", "--reference", p("gold.m2"), "--candidate", p("hyp")]
    if case.command == "evaluate":
        return ["evaluate", "-q", "--ref", p("ref"), "--hyps-baseline", p("hyp"), "--hyps-sys1", p("hyp2"),
                "--boot-samples", "10", "--ar-shuffles", "10", "--json", p("out")]
    raise ValueError(case.command)


def forest_input(case: Case) -> str:
    """The one file or directory of :data:`FOREST_INPUTS` that ``case`` gives."""
    given = {name.split("/")[0] for name in case.files} & set(FOREST_INPUTS)
    if len(given) != 1:
        raise ValueError(f"case {case.what!r} must give exactly one of {FOREST_INPUTS}, gives {sorted(given)}")
    return given.pop()


def run_case(case: Case, d: str) -> int:
    """Run the command of ``case`` on the files in ``d`` (written by :func:`write_case`); its exit status."""
    argv = command_line(case, d)
    if case.command in MOSES_PROGRAMS:
        from mtplug.integrations.moses.__main__ import main as moses_main

        return moses_main([program(case), *argv])
    from mtplug.cli import main

    return main(argv)


def defaults(case: Case) -> dict:
    base = {"nbest": GOOD_NBEST, "ref": GOOD_REF, "init": GOOD_INIT, "features.dat": GOOD_FEATURES,
            "scores.dat": GOOD_SCORES, "hyp": "a b c\nx y\n", "kbest": GOOD_KBEST, "src": GOOD_SRC,
            "sparse": GOOD_SPARSE, "weights": KBEST_INIT, "pro.data": GOOD_PRO, "dtrain.ini": GOOD_DTRAIN,
            "cdec.ini": "formalism=scfg\n", "tune.yaml": GOOD_TUNE, "moses.ini": "[weight]\nLM0= 0.5\nTM0= 0.2 0.2\n",
            "forest.weights": FOREST_WEIGHTS, "dense": GOOD_DENSE,
            "hyp2": "a b c\nx y z\n", "neural.weights": "fairseq_0 1\nF0_0 1\nf_0 1\n", "values": "1\n2\n",
            "gold.m2": GOOD_M2}
    return {**base, **case.files}


def _gz_truncated() -> bytes:
    data = gzip.compress(GOOD_NBEST.encode() * 50)
    return data[: len(data) // 2]



def _gz(content) -> bytes:
    return gzip.compress(content.encode("utf-8") if isinstance(content, str) else content, mtime=0)


def _gz_cut(content) -> bytes:
    """``content`` gzipped and cut in the middle of the compressed stream."""
    data = _gz(content)
    return data[: len(data) // 2]


def _hg(sentence0=GOOD_HG, **more) -> dict:
    """A --hgdir of two gzipped Moses hypergraphs (``sentence0`` as hg/0.gz), plus files ``more``."""
    return {"hg/0.gz": _gz(sentence0), "hg/1.gz": _gz(GOOD_HG.replace("a b c", "x y")), **more}


def _json(sentence0=GOOD_JSON) -> dict:
    """A forest directory of two cdec JSON forests (``sentence0`` as forests/0.json)."""
    return {"forests/0.json": sentence0, "forests/1.json": GOOD_JSON.replace("a ||| a b", "x ||| x y")}


def _patch(data: bytes, at: int, old: bytes, new: bytes) -> bytes:
    """``data`` with ``old`` at byte ``at`` replaced by ``new`` (the old bytes are checked)."""
    if data[at:at + len(old)] != old:
        raise ValueError(f"byte {at}: expected {old.hex(' ')}, found {data[at:at + len(old)].hex(' ')}")
    return data[:at] + new + data[at + len(old):]


def _bin(archive: bytes = CH_INSIDE, name: str = "0.bin.gz") -> dict:
    """A forest directory holding one cdec -O forest (gzipped unless ``name`` says otherwise)."""
    return {f"forests/{name}": _gz(archive) if name.endswith(".gz") else archive}


CASES = [
    # ---------------------------------------------------------------- Moses n-best
    Case("Moses n-best", "truncated line (fields missing)", {"nbest": NBEST_LINE[0] + "1 ||| x y ||| LM0="}, "mtplug: error: DIR/nbest:2: expected 4 '|||'-separated fields, as line 1 has, found 3: a line cut short (did the program writing the file stop in the middle of it?)"),
    # the last line as a decoder that died while writing "... TM0= 0.5 1.25 ||| -2\n" left it
    Case("Moses n-best", "last line cut (its score and a digit lost)", {"nbest": NBEST_LINE[0] + "1 ||| x y ||| LM0= -2 TM0= 0.5 1.2"},
         "mtplug: error: DIR/nbest:2: expected 4 '|||'-separated fields, as line 1 has, found 3: a line cut short (did the program writing the file stop in the middle of it?)"),
    Case("Moses n-best", "a line with fewer fields than the others",
         {"nbest": NBEST_LINE[0] + NBEST_LINE[1].replace(" ||| -2", "") + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:2: expected 4 '|||'-separated fields, as line 1 has, found 3: a line cut short (did the program writing the file stop in the middle of it?)"),
    Case("Moses n-best", "a line with more fields than the first", {"nbest": NBEST_LINE[0] + NBEST_LINE[1].replace("\n", " ||| 0-0\n")},
         "mtplug: error: DIR/nbest:2: expected 4 '|||'-separated fields, as line 1 has, found 5: every line of a file has the same fields"),
    Case("Moses n-best", "last line without its newline", {"nbest": GOOD_NBEST[:-1]},
         ACCEPTED + "a last line that has every field the others have is whole"),
    Case("Moses n-best", "two fields (no features)", {"nbest": "0 ||| a b c\n1 ||| x y ||| LM0= -2 TM0= 0.5 1 ||| -2\n"}, "mtplug: error: DIR/nbest:1: expected at least 3 fields 'id ||| hypothesis ||| features' (a score and more fields may follow, as Moses's extractor reads them), found fewer"),
    Case("Moses n-best", "three fields (no score)", {"nbest": "0 ||| a b c ||| LM0= -1.5 TM0= 1 2\n1 ||| x y ||| LM0= -2 TM0= 0.5 1\n"}, ACCEPTED + "the score is optional and ignored, as for Moses's extractor"),
    Case("Moses n-best", "wrong separator", {"nbest": "0 || a b c || LM0= -1.5 TM0= 1 2 || -1\n"}, "mtplug: error: DIR/nbest:1: expected at least 3 fields 'id ||| hypothesis ||| features' (a score and more fields may follow, as Moses's extractor reads them), found fewer"),
    Case("Moses n-best", "extra fields", {"nbest": GOOD_NBEST.replace("\n", " ||| x ||| y\n")}, ACCEPTED + 'Moses writes alignments and other fields after the score; they are ignored'),
    Case("Moses n-best", "non-numeric value", {"nbest": "0 ||| a b c ||| LM0= -1.5 TM0= one 2 ||| -1\n" + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:1: expected a number as feature value, got 'one'"),
    Case("Moses n-best", "NaN value", {"nbest": "0 ||| a b c ||| LM0= nan TM0= 1 2 ||| -1\n" + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:1: feature value 'nan' is not finite (NaN or infinity)"),
    Case("Moses n-best", "infinite value", {"nbest": "0 ||| a b c ||| LM0= -inf TM0= 1 2 ||| -1\n" + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:1: feature value '-inf' is not finite (NaN or infinity)"),
    Case("Moses n-best", "a feature twice on one line",
         {"nbest": "0 ||| a b c ||| LM0= -1.5 TM0= 1 2 LM0= 3 ||| -1\n" + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:1: feature 'LM0' appears twice on one line (or a sparse name equals a dense column)"),
    Case("Moses n-best", "sentence ids out of order", {"nbest": NBEST_LINE[1] + NBEST_LINE[0]}, "mtplug: error: DIR/nbest:2: sentence id 0 is smaller than the previous line's: n-best lists must be sorted by sentence"),
    Case("Moses n-best", "sentence id beyond the references",
         {"nbest": GOOD_NBEST + "2 ||| q ||| LM0= -1 TM0= 1 1 ||| -1\n"}, 'mtplug: error: DIR/nbest:3: sentence id 2 has no reference (the references have 2 sentences)'),
    Case("Moses n-best", "sentence without hypotheses", {"nbest": NBEST_LINE[1]}, 'mtplug: error: DIR/nbest: sentence 0 has no hypotheses (1 of 2 sentences are empty)'),
    Case("Moses n-best", "empty hypothesis", {"nbest": "0 |||  ||| LM0= -1.5 TM0= 1 2 ||| -1\n" + NBEST_LINE[1]}, ACCEPTED + 'an empty translation is a hypothesis (length 0, no matching n-grams)'),
    Case("Moses n-best", "blank line", {"nbest": NBEST_LINE[0] + "\n" + NBEST_LINE[1]}, ACCEPTED + "blank lines are skipped, as Moses's extractor skips them"),
    Case("Moses n-best", "invalid UTF-8", {"nbest": b"0 ||| a \xff c ||| LM0= -1.5 TM0= 1 2 ||| -1\n" + NBEST_LINE[1].encode()}, "mtplug: error: DIR/nbest:1: invalid UTF-8 in '\\xff'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8"),
    Case("Moses n-best", "CRLF line ends", {"nbest": GOOD_NBEST.replace("\n", "\r\n")}, ACCEPTED + 'a CR before the newline is dropped'),
    Case("Moses n-best", "truncated gzip", {"nbest.gz": _gz_truncated()}, 'mtplug: error: DIR/nbest: corrupt or truncated compressed data (Compressed file ended before the end-of-stream marker was reached)'),
    Case("Moses n-best", "empty file", {"nbest": ""}, 'mtplug: error: DIR/nbest: empty file: no hypotheses'),
    Case("Moses n-best", "invalid UTF-8 after a NUL", {"nbest": b"0 ||| a \x00\xff c ||| LM0= -1.5 TM0= 1 2 ||| -1\n" + NBEST_LINE[1].encode()},
         "mtplug: error: DIR/nbest:1: invalid UTF-8 in '\\x00\\xff'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8"),
    # ---------------------------------------------------------------- cdec k-best
    Case("cdec k-best", "value without '='", {"nbest": "0 ||| a b c ||| LM -1.5 TM_0=1 ||| -1\n" + KBEST_LINE[1],
                                               "init": KBEST_INIT},
         "mtplug: error: DIR/nbest:1: expected a number as feature value, got 'LM'"),
    Case("cdec k-best", "non-numeric value", {"nbest": "0 ||| a b c ||| LM=x TM_0=1 ||| -1\n" + KBEST_LINE[1],
                                               "init": KBEST_INIT},
         "mtplug: error: DIR/nbest:1: expected a number as feature value, got 'LM=x'"),
    Case("cdec k-best", "NaN value", {"nbest": "0 ||| a b c ||| LM=nan TM_0=1 ||| -1\n" + KBEST_LINE[1],
                                       "init": KBEST_INIT},
         "mtplug: error: DIR/nbest:1: feature value 'LM=nan' is not finite (NaN or infinity)"),
    Case("cdec k-best", "a feature twice on one line", {"nbest": "0 ||| a b c ||| LM=-1 LM=2 ||| -1\n" + KBEST_LINE[1],
                                                         "init": KBEST_INIT},
         "mtplug: error: DIR/nbest:1: feature 'LM' appears twice on one line (or a sparse name equals a dense column)"),
    Case("cdec k-best", "Moses labels mixed in", {"nbest": KBEST_LINE[0] + "1 ||| x y ||| LM0= -2 ||| -2\n",
                                                   "init": KBEST_INIT},
         "mtplug: error: DIR/nbest:2: dense feature label 'LM0' is not in the layout of the first line "
         "(no dense features)"),
    # ---------------------------------------------------------------- references
    Case("references", "too few lines", {"ref": "a b c\n"}, 'mtplug: error: DIR/nbest:2: sentence id 1 has no reference (the references have 1 sentences)'),
    Case("references", "one line too many", {"ref": GOOD_REF + "an extra line\n"}, 'mtplug: error: DIR/ref: has 3 lines, expected 2: one per sentence of the n-best lists (DIR/nbest), whose last sentence is 1 (unless the lists lack their last sentences)'),
    Case("references", "invalid UTF-8", {"ref": b"a b c\nx \xfe z\n"}, "mtplug: error: DIR/ref:2: invalid UTF-8 at byte 2: 'x \\xfe z'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8"),
    Case("references", "empty file", {"ref": ""}, 'mtplug: error: DIR/ref: empty reference file'),
    Case("references", "invalid UTF-8 after a CR", {"ref": b"a b c\nx \xfe\rz\n"}, "mtplug: error: DIR/ref:2: invalid UTF-8 at byte 2: 'x \\xfe\\rz'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8"),
    # ---------------------------------------------------------------- features.dat / scores.dat
    Case("features.dat / scores.dat", "truncated block", {"features.dat": GOOD_FEATURES.rsplit("-2", 1)[0]}, 'mtplug: error: DIR/features.dat:5: block of sentence 1 ends before its 1 lines',
         "mertdata"),
    Case("features.dat / scores.dat", "non-numeric value", {"features.dat": GOOD_FEATURES.replace("-1.5", "x")}, "mtplug: error: DIR/features.dat:2: expected 3 numbers, got 'x 1 2'",
         "mertdata"),
    Case("features.dat / scores.dat", "NaN feature", {"features.dat": GOOD_FEATURES.replace("-1.5", "nan")}, 'mtplug: error: DIR/features.dat:2: feature value is NaN or infinite',
         "mertdata"),
    Case("features.dat / scores.dat", "sentence ids out of order",
         {"features.dat": GOOD_FEATURES.split("FEATURES_TXT_END_0\n")[1] + "FEATURES_TXT_END_0\n"
          + GOOD_FEATURES.split("FEATURES_TXT_END_0\n")[0] + "FEATURES_TXT_END_0\n"}, 'mtplug: error: DIR/scores.dat: sentence blocks do not match those of DIR/features.dat', "mertdata"),
    Case("features.dat / scores.dat", "scores of another sentence count", {"scores.dat": GOOD_SCORES.split("SCORES_TXT_END_0\n")[0] + "SCORES_TXT_END_0\n"}, 'mtplug: error: DIR/scores.dat: sentence blocks do not match those of DIR/features.dat',
         "mertdata"),
    Case("features.dat / scores.dat", "wrong number of statistics", {"scores.dat": GOOD_SCORES.replace("3 3 2 2 1 1 0 0 3", "3 3 2 2 1")}, 'mtplug: error: DIR/scores.dat:2: expected 9 statistics, got 5',
         "mertdata"),
    Case("features.dat / scores.dat", "empty file", {"features.dat": ""}, 'mtplug: error: DIR/features.dat: empty features file', "mertdata"),
    # ---------------------------------------------------------------- start weights
    Case("init.opt", "too few weights", {"init": "0.5 0.2\n"}, 'mtplug: error: DIR/init:1: has 2 values, expected 3 (one per feature)'),
    Case("init.opt", "non-numeric weight", {"init": "0.5 x 0.2\n"}, "mtplug: error: DIR/init:1: cannot tell the weights format: expected a '[section]' line (moses.ini), lines of numbers (init.opt, weights.txt), 'Label= value' or 'name value' lines, got '0.5 x 0.2'"),
    Case("init.opt", "NaN weight", {"init": "0.5 nan 0.2\n"}, "mtplug: error: DIR/init:1: value is 'nan'; expected a finite number"),
    Case("init.opt", "a range with minimum > maximum", {"init": "0.5 0.2 0.2\n0 0 1\n1 -1 1\n"}, "mtplug: error: DIR/init:3: feature 1 (column 2) has the range [0, -1]: expected each minimum (line 2) <= its maximum (line 3)"),
    Case("moses.ini", "no [weight] section", {"init": "[input-factors]\n0\n"}, "mtplug: error: DIR/init: no [weight] section; expected a '[weight]' line followed by 'Label= value' lines"),
    Case("moses.ini", "two [weight] sections", {"init": "[weight]\nLM0= 1\n[weight]\nTM0= 1 1\n"}, 'mtplug: error: DIR/init:3: second [weight] section (the first starts at line 1); expected one'),
    Case("moses.ini", "value missing", {"init": "[weight]\nLM0=\nTM0= 1 1\n"}, "mtplug: error: DIR/init:2: label 'LM0' has no value; expected 'Label= value [value ...]'"),
    Case("moses.ini", "more values for a label than the n-best has", {"init": "[weight]\nLM0= 1\nTM0= 1 1 1\n"}, "mtplug: error: DIR/init: gives 3 value(s) for TM0, but the n-best lists have 2 (TM0_0 .. TM0_1); expected one start weight per column"),
    Case("moses.ini", "a dense feature of the n-best missing", {"init": "[weight]\nTM0= 1 1\n"}, "mtplug: error: DIR/init: gives 0 value(s) for LM0, but the n-best lists have 1 (LM0_0 .. LM0_0); expected one start weight per column"),
    Case("moses.ini", "feature never seen in the n-best", {"init": "[weight]\nLM0= 1\nTM0= 1 1\nXX0= 1\n"}, ACCEPTED + 'moses.ini holds untuneable features (UnknownWordPenalty0); they are kept and written back unchanged'),
    Case("weights file (name value)", "a name twice", {"init": "LM0_0 1\nLM0_0 2\n"}, "mtplug: error: DIR/init:2: feature 'LM0_0' given twice (first at line 1); expected each feature once"),
    Case("weights file (name value)", "weight naming a feature never seen", {"init": "LM0_0 1\nTM0_0 1\nTM0_1 1\nNope 1\n"}, ACCEPTED + "kept and written back unchanged (cdec's PassThrough, a sparse feature not seen yet)"),
    Case("weights file (name value)", "a dense feature of the n-best missing", {"init": "LM0_0 1\nTM0_0 1\n"}, WARNED + "mtplug: warning: DIR/init: 1 dense feature(s) of the n-best lists have no weight and start at 0 (TM0_1)"),
    Case("weights file (name value)", "no weight names a feature of the n-best", {"init": "LanguageModel 1\nWordPenalty -1\n"}, "mtplug: error: DIR/init: none of its 2 weight(s) names a feature of the n-best lists (it gives LanguageModel, WordPenalty; expected names such as LM0_0, TM0_0, TM0_1), so every model score would be 0"),
    # ---------------------------------------------------------------- Moses sparse weights
    Case("Moses sparse weights", "value missing", {"sparse": "WT_a~b 0.5\nWT_c~d\n"},
         "kbmira: error: DIR/sparse:2: feature 'WT_c~d' has no value; expected 'name value', got 'WT_c~d'", "sparse"),
    Case("Moses sparse weights", "two values", {"sparse": "WT_a~b 0.5 1\n"},
         "kbmira: error: DIR/sparse:1: expected 'name value' (2 fields), got 3 fields: 'WT_a~b 0.5 1'", "sparse"),
    Case("Moses sparse weights", "non-numeric value", {"sparse": "WT_a~b half\n"},
         "kbmira: error: DIR/sparse:1: expected a number for 'WT_a~b', got 'half'", "sparse"),
    Case("Moses sparse weights", "NaN value", {"sparse": "WT_a~b nan\n"},
         "kbmira: error: DIR/sparse:1: value for 'WT_a~b' is 'nan'; expected a finite number", "sparse"),
    Case("Moses sparse weights", "infinite value", {"sparse": "WT_a~b -inf\n"},
         "kbmira: error: DIR/sparse:1: value for 'WT_a~b' is '-inf'; expected a finite number", "sparse"),
    Case("Moses sparse weights", "value beyond a double", {"sparse": "WT_a~b 1e999\n"},
         "kbmira: error: DIR/sparse:1: value for 'WT_a~b' '1e999' overflows a double; expected a finite number", "sparse"),
    Case("Moses sparse weights", "a name twice", {"sparse": "WT_a~b 0.5\nWT_c~d 1\nWT_a~b 2\n"},
         "kbmira: error: DIR/sparse:3: feature 'WT_a~b' given twice (first at line 1); expected each feature once", "sparse"),
    Case("Moses sparse weights", "blank line", {"sparse": "WT_a~b 0.5\n\nWT_c~d 1\n"},
         "kbmira: error: DIR/sparse:2: blank line; expected 'name value' on every line (Moses stops reading at a line it cannot parse)", "sparse"),
    Case("Moses sparse weights", "'#' comment line", {"sparse": "# tuned\nWT_a~b 0.5\n"},
         "kbmira: error: DIR/sparse:1: Moses reads no comments here; expected 'name value', got '# tuned'", "sparse"),
    Case("Moses sparse weights", "invalid UTF-8", {"sparse": b"WT_a~b 0.5\nWT_\xff 1\n"},
         "kbmira: error: DIR/sparse:2: invalid UTF-8 at byte 3: 'WT_\\xff 1'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "sparse"),
    Case("Moses sparse weights", "empty file", {"sparse": ""}, ACCEPTED + "no sparse weights", "sparse"),
    Case("Moses sparse weights", "CRLF line ends", {"sparse": GOOD_SPARSE.replace("\n", "\r\n")},
         ACCEPTED + "a CR before the newline is dropped", "sparse"),
    Case("Moses sparse weights", "TAB or several spaces between name and value",
         {"sparse": "WT_a~b\t0.5\nWT_c~d   -0.25\n"}, ACCEPTED + "any run of spaces and TABs separates the fields",
         "sparse"),
    Case("Moses sparse weights", "weight naming a feature never seen", {"sparse": "WT_never~seen 1\n"},
         ACCEPTED + "kept as given: the feature may turn up in a later n-best list", "sparse"),
    # ---------------------------------------------------------------- cdec weights
    Case("cdec weights", "line starts with whitespace", {"weights": "LM 0.5\n TM_0 0.2\n"},
         "mtplug: error: DIR/weights:2: line starts with whitespace, which cdec rejects; expected 'Name value' (separated by spaces, a TAB or '=')", "cdecweights"),
    Case("cdec weights", "value missing", {"weights": "LM 0.5\nTM_0\n"},
         "mtplug: error: DIR/weights:2: feature 'TM_0' has no value; expected 'Name value' (separated by spaces, a TAB or '='), got 'TM_0'", "cdecweights"),
    Case("cdec weights", "'=' without a value", {"weights": "LM=\n"},
         "mtplug: error: DIR/weights:1: feature 'LM' has no value; expected 'Name value' (separated by spaces, a TAB or '='), got 'LM='", "cdecweights"),
    Case("cdec weights", "two values", {"weights": "LM 0.5 1\n"},
         "mtplug: error: DIR/weights:1: feature 'LM' has more than one value; expected 'Name value' (separated by spaces, a TAB or '='), got 'LM 0.5 1'", "cdecweights"),
    Case("cdec weights", "name missing", {"weights": "=0.5\n"},
         "mtplug: error: DIR/weights:1: no feature name before '='; expected 'Name value' (separated by spaces, a TAB or '='), got '=0.5'", "cdecweights"),
    Case("cdec weights", "non-numeric value", {"weights": "LM half\n"},
         "mtplug: error: DIR/weights:1: expected a number for 'LM', got 'half'", "cdecweights"),
    Case("cdec weights", "NaN value", {"weights": "LM NaN\n"},
         "mtplug: error: DIR/weights:1: value for 'LM' is 'NaN'; expected a finite number", "cdecweights"),
    Case("cdec weights", "infinite value", {"weights": "LM=-inf\n"},
         "mtplug: error: DIR/weights:1: value for 'LM' is '-inf'; expected a finite number", "cdecweights"),
    Case("cdec weights", "a name twice", {"weights": "LM 0.5\nTM_0 0.2\nLM=1\n"},
         "mtplug: error: DIR/weights:3: feature 'LM' given twice (first at line 1); expected each feature once", "cdecweights"),
    Case("cdec weights", "invalid UTF-8", {"weights": b"LM 0.5\nTM_\xff 0.2\n"},
         "mtplug: error: DIR/weights:2: invalid UTF-8 at byte 3: 'TM_\\xff 0.2'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "cdecweights"),
    Case("cdec weights", "comments, blank lines, 'Name=value' and TAB",
         {"weights": "# cdec weights\n\nLM=0.5\nTM_0\t0.2\n"},
         ACCEPTED + "'#' lines and blank lines are skipped; '=', a TAB or spaces separate name and value, as cdec "
                    "reads them", "cdecinit"),
    Case("cdec weights", "CRLF line ends", {"weights": KBEST_INIT.replace("\n", "\r\n")},
         ACCEPTED + "a CR before the newline is dropped", "cdecinit"),
    Case("cdec weights", "empty file, as --init (dtrain's input_weights takes it as all-zero weights)", {"weights": ""},
         "mtplug: error: DIR/weights: no weights in the file (only blank or '#' lines); cannot detect its format", "cdecinit"),
    # ---------------------------------------------------------------- plain translations
    Case("translations (mtplug score)", "more lines than references", {"hyp": "a\nb\nc\n"}, 'mtplug: error: DIR/hyp:3: more lines than the references have (2)', "score"),
    Case("translations (mtplug score)", "invalid UTF-8", {"hyp": b"a \xff\nx\n"},
         "mtplug: error: DIR/hyp:1: invalid UTF-8 in '\\xff'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "score"),
    # ---------------------------------------------------------------- pro.data
    Case("pro.data (megam)", "truncated line (value missing)", {"pro.data": "1 F0 0.5 F2\n0 F0 -0.5 F2 1\n"}, "megam_i686.opt: error: DIR/pro.data:1: feature 'F2' has no value; expected 'LABEL NAME VALUE ...' (a value after every name)",
         "megam"),
    Case("pro.data (megam)", "label not 0 or 1", {"pro.data": "2 F0 0.5\n" + GOOD_PRO},
         "megam_i686.opt: error: DIR/pro.data:1: label must be 0 or 1, got '2'; expected 'LABEL NAME VALUE ...'", "megam"),
    Case("pro.data (megam)", "non-numeric value", {"pro.data": "1 F0 half\n"},
         "megam_i686.opt: error: DIR/pro.data:1: expected a number for 'F0', got 'half'", "megam"),
    Case("pro.data (megam)", "NaN value", {"pro.data": GOOD_PRO + "1 F0 nan\n"},
         "megam_i686.opt: error: DIR/pro.data:3: value for 'F0' is 'nan'; expected a finite number", "megam"),
    Case("pro.data (megam)", "infinite value", {"pro.data": "1 F0 inf\n"},
         "megam_i686.opt: error: DIR/pro.data:1: value for 'F0' is 'inf'; expected a finite number", "megam"),
    Case("pro.data (megam)", "value beyond a double", {"pro.data": "1 F0 1e999\n"},
         "megam_i686.opt: error: DIR/pro.data:1: value for 'F0' '1e999' overflows a double; expected a finite number", "megam"),
    Case("pro.data (megam)", "a feature twice on one line", {"pro.data": "1 F0 0.5 F0 1\n"},
         "megam_i686.opt: error: DIR/pro.data:1: feature 'F0' twice on one line; expected each feature once per line", "megam"),
    Case("pro.data (megam)", "blank line", {"pro.data": GOOD_PRO.replace("\n", "\n\n", 1)},
         "megam_i686.opt: error: DIR/pro.data:2: empty line (expected a label 0 or 1 and feature/value pairs)", "megam"),
    Case("pro.data (megam)", "dense index out of reach", {"pro.data": "1 F99999999 1\n"},
         "megam_i686.opt: error: DIR/pro.data:1: dense feature F99999999: expected F0..F99999 (sparse feature names are not F<number>)", "megam"),
    Case("pro.data (megam)", "invalid UTF-8", {"pro.data": b"1 F0 0.5 WT_\xff 1 \n"},
         "megam_i686.opt: error: DIR/pro.data:1: invalid UTF-8 at byte 12: '1 F0 0.5 WT_\\xff 1 '; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "megam"),
    Case("pro.data (megam)", "empty file", {"pro.data": ""},
         "megam_i686.opt: error: DIR/pro.data: no training lines; expected pro.data lines 'label name value ...'", "megam"),
    Case("pro.data (megam)", "CRLF line ends", {"pro.data": GOOD_PRO.replace("\n", "\r\n")},
         ACCEPTED + "a CR before the newline is dropped", "megam"),
    # ---------------------------------------------------------------- dtrain.ini
    Case("dtrain.ini", "unknown key", {"dtrain.ini": GOOD_DTRAIN + "learnin_rate=0.1\n"},
         "mtplug: error: DIR/dtrain.ini:7: unknown dtrain key 'learnin_rate' (did you mean 'learning_rate'?)", "dtrain"),
    Case("dtrain.ini", "a key twice", {"dtrain.ini": GOOD_DTRAIN + "k=10\nepochs=2\nk=20\n"},
         "mtplug: error: DIR/dtrain.ini:9: k is given twice (first on line 7); expected each key once", "dtrain"),
    Case("dtrain.ini", "value missing", {"dtrain.ini": GOOD_DTRAIN + "k\n"},
         "mtplug: error: DIR/dtrain.ini:7: k: needs a value (k=VALUE)", "dtrain"),
    Case("dtrain.ini", "key missing", {"dtrain.ini": GOOD_DTRAIN + "=10\n"},
         "mtplug: error: DIR/dtrain.ini:7: no key before '='; expected key=value, got '=10'", "dtrain"),
    Case("dtrain.ini", "word for an integer", {"dtrain.ini": GOOD_DTRAIN + "k=ten\n"},
         "mtplug: error: DIR/dtrain.ini:7: k: expected a non-negative integer, got 'ten'", "dtrain"),
    Case("dtrain.ini", "fraction for an integer", {"dtrain.ini": GOOD_DTRAIN + "epochs=1.5\n"},
         "mtplug: error: DIR/dtrain.ini:7: epochs: expected a non-negative integer, got '1.5'", "dtrain"),
    Case("dtrain.ini", "non-ASCII digits", {"dtrain.ini": GOOD_DTRAIN + "k=\uff11\uff10\n"},
         "mtplug: error: DIR/dtrain.ini:7: k: expected a non-negative integer, got '１０'", "dtrain"),
    Case("dtrain.ini", "integer beyond dtrain's unsigned", {"dtrain.ini": GOOD_DTRAIN + "epochs=99999999999\n"},
         "mtplug: error: DIR/dtrain.ini:7: epochs: 99999999999 is too large; expected an integer from 0 to 4294967295 (dtrain's unsigned)", "dtrain"),
    Case("dtrain.ini", "non-numeric value", {"dtrain.ini": GOOD_DTRAIN + "gamma=small\n"},
         "mtplug: error: DIR/dtrain.ini:7: gamma: expected a number, got 'small'", "dtrain"),
    Case("dtrain.ini", "NaN value", {"dtrain.ini": GOOD_DTRAIN + "learning_rate=nan\n"},
         "mtplug: error: DIR/dtrain.ini:7: learning_rate: expected a finite number, got 'nan'", "dtrain"),
    Case("dtrain.ini", "infinite value", {"dtrain.ini": GOOD_DTRAIN + "loss_margin=inf\n"},
         "mtplug: error: DIR/dtrain.ini:7: loss_margin: expected a finite number, got 'inf'", "dtrain"),
    Case("dtrain.ini", "flag neither true nor false", {"dtrain.ini": GOOD_DTRAIN + "keep=maybe\n"},
         "mtplug: error: DIR/dtrain.ini:7: keep: expected a flag (true/false), got 'maybe'", "dtrain"),
    Case("dtrain.ini", "value not among the choices", {"dtrain.ini": GOOD_DTRAIN + "pair_sampling=xyx\n"}, "mtplug: error: DIR/dtrain.ini:7: pair_sampling: 'xyx' is not one of XYX, XYX-full, all, PRO (did you mean XYX?)",
         "dtrain"),
    Case("dtrain.ini", "setting that cannot take effect", {"dtrain.ini": GOOD_DTRAIN + "pair_sampling=all\nhi_lo=0.2\n"},
         "mtplug: error: DIR/dtrain.ini:8: hi_lo: has no effect with pair_sampling=all; it applies to XYX and XYX-full",
         "dtrain"),
    Case("dtrain.ini", "value out of range", {"dtrain.ini": GOOD_DTRAIN + "hi_lo=0.7\n"},
         "mtplug: error: DIR/dtrain.ini:7: hi_lo: must lie in [0.01, 0.5], got 0.7", "dtrain"),
    Case("dtrain.ini", "[section] line", {"dtrain.ini": "[dtrain]\n" + GOOD_DTRAIN},
         "mtplug: error: DIR/dtrain.ini:1: sections are not dtrain keys: '[dtrain]'", "dtrain"),
    Case("dtrain.ini", "refs missing", {"dtrain.ini": GOOD_DTRAIN.replace("refs=DIR/ref\n", "")},
         "mtplug: error: DIR/dtrain.ini: refs: give 'input' and 'refs', or 'bitext'", "dtrain"),
    Case("dtrain.ini", "invalid UTF-8", {"dtrain.ini": GOOD_DTRAIN.encode() + b"k=1\xff0\n"},
         "mtplug: error: DIR/dtrain.ini:7: invalid UTF-8 at byte 3: 'k=1\\xff0'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "dtrain"),
    Case("dtrain.ini", "empty file", {"dtrain.ini": ""},
         "mtplug: error: DIR/dtrain.ini: decoder_config is required (the cdec.ini of the decoder; or give --decoder-config)", "dtrain"),
    # ---------------------------------------------------------------- tune YAML
    Case("tune YAML", "unknown option", {"tune.yaml": GOOD_TUNE + "nbset: 10\n"},
         "mtplug: error: DIR/tune.yaml:7: unknown option 'nbset' (did you mean 'nbest_size'?); known: decoder, decoder_args, decoder_bin, decoder_config, decoder_timeout, final_weights, forests, input, interpolate, iterations, jobs, lowercase, metric, min_change, nbest_size, optimizer, patience, pool_reset, ref, reflen, scheduler, seed, test_input, test_ref, threads, weights, workdir, optimizer_options", "tune"),
    Case("tune YAML", "test references without a test set", {"tune.yaml": GOOD_TUNE + "test_ref: [DIR/ref]\n"},
         "mtplug: error: DIR/tune.yaml:7: test_ref needs test_input too (a test set is its source and its references)", "tune"),
    Case("tune YAML", "test set and test references of different lengths",
         {"tune.yaml": GOOD_TUNE + "test_input: DIR/test.src\ntest_ref: [DIR/ref]\n", "test.src": "a\nb\nc\n"},
         "mtplug: error: DIR/test.src: 3 test sentences but 2 test references (DIR/ref)", "tune"),
    Case("tune YAML", "an option twice", {"tune.yaml": GOOD_TUNE + "nbest_size: 10\nseed: 1\nnbest_size: 20\n"},
         "mtplug: error: DIR/tune.yaml:9: nbest_size is given twice (first on line 7); expected each option once", "tune"),
    Case("tune YAML", "word for an integer", {"tune.yaml": GOOD_TUNE + "iterations: ten\n"},
         "mtplug: error: DIR/tune.yaml:7: iterations must be an integer, got 'ten'", "tune"),
    Case("tune YAML", "fraction for an integer", {"tune.yaml": GOOD_TUNE + "iterations: 2.5\n"},
         "mtplug: error: DIR/tune.yaml:7: iterations must be an integer, got 2.5", "tune"),
    Case("tune YAML", "boolean for an integer", {"tune.yaml": GOOD_TUNE + "nbest_size: yes\n"},
         "mtplug: error: DIR/tune.yaml:7: nbest_size must be an integer, got true", "tune"),
    Case("tune YAML", "value missing (null)", {"tune.yaml": GOOD_TUNE + "nbest_size:\n"},
         "mtplug: error: DIR/tune.yaml:7: nbest_size must be an integer, got null", "tune"),
    Case("tune YAML", "number for a flag", {"tune.yaml": GOOD_TUNE + "lowercase: 1\n"},
         "mtplug: error: DIR/tune.yaml:7: lowercase must be true or false, got 1", "tune"),
    Case("tune YAML", "list for a string", {"tune.yaml": GOOD_TUNE + "decoder_args: [-threads, 4]\n"},
         "mtplug: error: DIR/tune.yaml:7: decoder_args must be a string, got ['-threads', 4]", "tune"),
    Case("tune YAML", "NaN value", {"tune.yaml": GOOD_TUNE + "min_change: .nan\n"},
         "mtplug: error: DIR/tune.yaml:7: min_change must be a finite number, got nan", "tune"),
    Case("tune YAML", "infinite value", {"tune.yaml": GOOD_TUNE + "interpolate: .inf\n"},
         "mtplug: error: DIR/tune.yaml:7: interpolate must be a finite number, got inf", "tune"),
    Case("tune YAML", "value not among the choices", {"tune.yaml": GOOD_TUNE + "reflen: longest\n"},
         "mtplug: error: DIR/tune.yaml:7: reflen must be one of closest, shortest, average, got 'longest'", "tune"),
    Case("tune YAML", "value out of range", {"tune.yaml": GOOD_TUNE + "iterations: 0\n"},
         'mtplug: error: DIR/tune.yaml:7: iterations must be an integer >= 1, got 0', "tune"),
    Case("tune YAML", "optimizer_options not a mapping", {"tune.yaml": GOOD_TUNE + "optimizer_options: [restarts, 2]\n"},
         "mtplug: error: DIR/tune.yaml:7: optimizer_options must be a mapping (name: value lines indented under it)", "tune"),
    Case("tune YAML", "optimizer option of the wrong type",
         {"tune.yaml": GOOD_TUNE + "optimizer_options:\n  restarts: many\n"}, "mtplug: error: DIR/tune.yaml:8: optimizer_options: restarts must be an integer, got 'many'", "tune"),
    Case("tune YAML", "option of another optimizer", {"tune.yaml": GOOD_TUNE + "optimizer_options: {passes: 3}\n"},
         "mtplug: error: DIR/tune.yaml:7: optimizer_options: passes is not an option of mert (its options: activate_features, directions, max_iterations, mu_max, mu_start, random_directions, random_walks, reg, reg_fixed_feature, reg_strength, restarts, tolerance)", "tune"),
    Case("tune YAML", "optimizer option twice",
         {"tune.yaml": GOOD_TUNE + "optimizer_options:\n  restarts: 2\n  restarts: 3\n"}, "mtplug: error: DIR/tune.yaml:9: optimizer_options: restarts is given twice (first on line 8); expected each option once", "tune"),
    Case("tune YAML", "not a mapping", {"tune.yaml": "- decoder: moses\n"},
         "mtplug: error: DIR/tune.yaml:1: expected a mapping of option: value", "tune"),
    Case("tune YAML", "YAML syntax error", {"tune.yaml": GOOD_TUNE + "iterations: [1\n"},
         "mtplug: error: DIR/tune.yaml:7: not valid YAML (expected ',' or ']', but got '<stream end>')", "tune"),
    Case("tune YAML", "invalid UTF-8", {"tune.yaml": GOOD_TUNE.encode() + b"decoder_args: '\xff'\n"},
         "mtplug: error: DIR/tune.yaml:7: invalid UTF-8 at byte 15: 'decoder_args: '\\xff''; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "tune"),
    Case("tune YAML", "empty file", {"tune.yaml": ""},
         "mtplug: error: DIR/tune.yaml: missing option(s): --decoder, --decoder-bin, --decoder-config, --input, --ref, --workdir (as flags or in --yaml)", "tune"),
    # ---------------------------------------------------------------- PLF lattices
    Case("PLF lattices", "truncated line", {"lattices.plf": PLF_LINE[0] + "((('x',-0.5,1),('q',-1,"},
         "mtplug: error: DIR/lattices.plf:2: character 24: expected a number, found the end of the line", "kbest"),
    Case("PLF lattices", "unbalanced parentheses", {"lattices.plf": PLF_LINE[0][:-2] + "\n" + PLF_LINE[1]},
         "mtplug: error: DIR/lattices.plf:1: character 44: expected '(' starting a column or ')' ending the lattice, found the end of the line", "kbest"),
    Case("PLF lattices", "wrong separator", {"lattices.plf": "((('a';-1;1),),)\n"},
         "mtplug: error: DIR/lattices.plf:1: character 7: expected ',' after the word 'a', found ';'", "kbest"),
    Case("PLF lattices", "jump missing", {"lattices.plf": "((('a',),),)\n"},
         "mtplug: error: DIR/lattices.plf:1: character 8: expected a cost or the jump (a positive integer), found ')'", "kbest"),
    Case("PLF lattices", "an extra number in an arc",
         {"lattices.plf": GOOD_PLF.replace("('a',-1,1)", "('a',-1,-2,1)")},
         ACCEPTED + "every number before the jump is a dense cost (LatticeCost_0, LatticeCost_1, ...), as cdec and Moses read them", "kbest"),
    Case("PLF lattices", "text after the lattice", {"lattices.plf": PLF_LINE[0][:-1] + " x\n"},
         "mtplug: error: DIR/lattices.plf:1: character 46: unexpected text after the lattice: 'x'", "kbest"),
    Case("PLF lattices", "double-quoted word", {"lattices.plf": GOOD_PLF.replace("'b'", '"b"')},
         "mtplug: error: DIR/lattices.plf:1: character 18: words are single-quoted ('...'); cdec and Moses do not read double quotes", "kbest"),
    Case("PLF lattices", "non-numeric cost", {"lattices.plf": GOOD_PLF.replace("('b',-1,1)", "('b',x,1)")},
         "mtplug: error: DIR/lattices.plf:1: character 22: expected a number for a cost, found 'x'", "kbest"),
    Case("PLF lattices", "NaN cost", {"lattices.plf": GOOD_PLF.replace("('b',-1,1)", "('b',nan,1)")},
         "mtplug: error: DIR/lattices.plf:1: character 22: a cost is 'nan'; expected a finite number", "kbest"),
    Case("PLF lattices", "infinite cost", {"lattices.plf": GOOD_PLF.replace("('b',-1,1)", "('b',-inf,1)")},
         "mtplug: error: DIR/lattices.plf:1: character 22: a cost is '-inf'; expected a finite number", "kbest"),
    Case("PLF lattices", "cost beyond a double", {"lattices.plf": GOOD_PLF.replace("('b',-1,1)", "('b',1e999,1)")},
         "mtplug: error: DIR/lattices.plf:1: character 22: a cost '1e999' overflows a double; expected a finite number", "kbest"),
    Case("PLF lattices", "a feature twice on one arc",
         {"lattices.plf": GOOD_PLF.replace("('b',-1,1)", "('b',{'f':1,'f':2},1)")},
         "mtplug: error: DIR/lattices.plf:1: character 29: feature 'f' is given twice on one arc", "kbest"),
    Case("PLF lattices", "jump past the end", {"lattices.plf": GOOD_PLF.replace("('c',-1,1)", "('c',-1,2)")},
         "mtplug: error: DIR/lattices.plf:1: character 39: arc 'c' from node 2 jumps 2, past the final node 3", "kbest"),
    Case("PLF lattices", "jump 0 (an arc into its own node)",
         {"lattices.plf": GOOD_PLF.replace("('b',-1,1)", "('b',-1,0)")},
         "mtplug: error: DIR/lattices.plf:1: character 25: arc 'b' from node 1 has jump 0; expected a jump of at least 1", "kbest"),
    Case("PLF lattices", "a node no arc reaches", {"lattices.plf": GOOD_PLF.replace("('a',-1,1)", "('a',-1,2)")},
         "mtplug: error: DIR/lattices.plf:1: character 16: no arc reaches node 1", "kbest"),
    Case("PLF lattices", "empty column", {"lattices.plf": GOOD_PLF.replace("(('b',-1,1),)", "()")},
         "mtplug: error: DIR/lattices.plf:1: character 16: the column of node 1 is empty; expected at least one arc", "kbest"),
    Case("PLF lattices", "more lattices than references", {"lattices.plf": GOOD_PLF + PLF_LINE[0]},
         "mtplug: error: DIR/lattices.plf:3: sentence id 2 has no reference (the references have 2 sentences)", "forestmert"),
    Case("PLF lattices", "fewer lattices than references", {"lattices.plf": PLF_LINE[0]},
         "mtplug: error: DIR/lattices.plf: sentence 1 has no forest (1 of 2 sentences have none)", "forestmert"),
    Case("PLF lattices", "blank line", {"lattices.plf": PLF_LINE[0] + "\n" + PLF_LINE[1]},
         "mtplug: error: DIR/lattices.plf:2: blank line; expected a PLF lattice (an empty lattice is written '()')", "kbest"),
    Case("PLF lattices", "empty lattice '()'", {"lattices.plf": PLF_LINE[0] + "()\n"},
         ACCEPTED + "'()' is the lattice of an empty sentence: its one translation is empty", "kbest"),
    Case("PLF lattices", "invalid UTF-8", {"lattices.plf": PLF_LINE[0].encode() + b"((('\xff',-1,1),),)\n"},
         "mtplug: error: DIR/lattices.plf:2: invalid UTF-8 at byte 4: '((('\\xff',-1,1),),)'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "kbest"),
    Case("PLF lattices", "CRLF line ends", {"lattices.plf": GOOD_PLF.replace("\n", "\r\n")},
         ACCEPTED + "a CR before the newline is dropped", "kbest"),
    Case("PLF lattices", "truncated gzip", {"lattices.plf": _gz_cut(GOOD_PLF)},
         "mtplug: error: DIR/lattices.plf: corrupt or truncated compressed data (Compressed file ended before the end-of-stream marker was reached)", "kbest"),
    Case("PLF lattices", "empty file", {"lattices.plf": ""},
         "mtplug: error: DIR/lattices.plf: empty file: expected PLF lattices (lines starting with '(') or a Moses search graph (lines with 'hyp='), or a directory of per-sentence forests", "kbest"),
    # ---------------------------------------------------------------- Moses search graph
    Case("Moses search graph", "truncated line",
         {"search.graph": GOOD_SG.replace(SG_LINE[2], SG_LINE[2][:45] + "\n")},
         "mtplug: error: DIR/search.graph:3: expected field forward= (a hypothesis line has hyp, stack, back, score, transition, forward, fscore, covered)", "kbest"),
    Case("Moses search graph", "wrong separator", {"search.graph": GOOD_SG.replace("back=1", "back:1")},
         "mtplug: error: DIR/search.graph:3: expected key=value fields (hyp, stack, back, score, transition, forward, fscore, covered), got 'back:1'", "kbest"),
    Case("Moses search graph", "field missing", {"search.graph": GOOD_SG.replace(" covered=1-1", "")},
         "mtplug: error: DIR/search.graph:3: expected field covered= (a hypothesis line has hyp, stack, back, score, transition, forward, fscore, covered)", "kbest"),
    Case("Moses search graph", "unknown field",
         {"search.graph": GOOD_SG.replace(" fscore=0 covered=1-1", " fscore=0 cost=2 covered=1-1")},
         "mtplug: error: DIR/search.graph:3: expected key=value fields (hyp, stack, back, score, transition, forward, fscore, covered), got 'cost=2'", "kbest"),
    Case("Moses search graph", "a field twice", {"search.graph": GOOD_SG.replace("back=1", "back=1 back=0")},
         "mtplug: error: DIR/search.graph:3: field back= appears twice", "kbest"),
    Case("Moses search graph", "non-numeric value",
         {"search.graph": GOOD_SG.replace("score=-2 transition=-1", "score=-2 transition=x")},
         "mtplug: error: DIR/search.graph:3: expected a number for 'transition', got 'x'", "kbest"),
    Case("Moses search graph", "NaN value",
         {"search.graph": GOOD_SG.replace("score=-2 transition=-1", "score=-2 transition=nan")},
         "mtplug: error: DIR/search.graph:3: value for 'transition' is 'nan'; expected a finite number", "kbest"),
    Case("Moses search graph", "infinite value",
         {"search.graph": GOOD_SG.replace("score=-2 transition=-1", "score=-2 transition=-inf")},
         "mtplug: error: DIR/search.graph:3: value for 'transition' is '-inf'; expected a finite number", "kbest"),
    Case("Moses search graph", "non-numeric hypothesis id", {"search.graph": GOOD_SG.replace("back=1", "back=one")},
         "mtplug: error: DIR/search.graph:3: expected back=<non-negative integer>, got back=one", "kbest"),
    Case("Moses search graph", "a sparse score twice (extended form)",
         {"search.graph": SG_EXTENDED.replace("WT_a~a=1", "WT_a~a=1 WT_a~a=2")},
         "mtplug: error: DIR/search.graph:2: score 'WT_a~a' appears twice on one line (or a sparse name equals a dense one); expected each feature once", "kbest"),
    Case("Moses search graph", "wrong number of dense scores (extended form)",
         {"search.graph": SG_EXTENDED + SG_EXTENDED.replace("0 hyp=", "1 hyp=").replace("-1,0.5", "-1")},
         "mtplug: error: DIR/search.graph:4: 1 dense scores; expected 2 as on earlier lines", "kbest"),
    Case("Moses search graph", "plain and extended lines mixed",
         {"search.graph": SG_EXTENDED + SG_LINE[3] + SG_LINE[4]},
         'mtplug: error: DIR/search.graph:4: line is in the plain (out=...) form, earlier lines in the extended (scores="..." out="...") form', "kbest"),
    Case("Moses search graph", "back= names a hypothesis without a line",
         {"search.graph": GOOD_SG.replace("back=1", "back=7")},
         "mtplug: error: DIR/search.graph:3: back=7: hypothesis 7 has no line of its own in sentence 0", "kbest"),
    Case("Moses search graph", "a hypothesis not after its back hypothesis (a cycle)",
         {"search.graph": GOOD_SG.replace("stack=2 back=1", "stack=1 back=1")},
         "mtplug: error: DIR/search.graph:3: hypothesis 2 covers 1 source words, no more than its back hypothesis 1 (1)", "kbest"),
    Case("Moses search graph", "a hypothesis twice", {"search.graph": GOOD_SG.replace("hyp=2", "hyp=1")},
         "mtplug: error: DIR/search.graph:3: hypothesis 1 of sentence 0 appears twice (first on line 2)", "kbest"),
    Case("Moses search graph", "the lines of a sentence apart",
         {"search.graph": SG_LINE[0] + SG_LINE[3] + SG_LINE[4] + SG_LINE[1] + SG_LINE[2]},
         "mtplug: error: DIR/search.graph:4: sentence 0 appears again after other sentences; expected the lines of a sentence together", "kbest"),
    Case("Moses search graph", "sentences in descending order", {"search.graph": "".join(SG_LINE[3:] + SG_LINE[:3])},
         ACCEPTED + "the lines of each sentence are together; sentences are matched to the references by id, in any order", "forestmert"),
    Case("Moses search graph", "sentence id beyond the references",
         {"search.graph": GOOD_SG + SG_LINE[3].replace("1 ", "2 ", 1)},
         "mtplug: error: DIR/search.graph: sentence id 2 has no reference (the references have 2 sentences)", "forestmert"),
    Case("Moses search graph", "sentence missing", {"search.graph": "".join(SG_LINE[:3])},
         "mtplug: error: DIR/search.graph: sentence 1 has no forest (1 of 2 sentences have none)", "forestmert"),
    Case("Moses search graph", "blank line", {"search.graph": GOOD_SG.replace("\n", "\n\n", 1)},
         ACCEPTED + "blank lines are skipped", "kbest"),
    Case("Moses search graph", "invalid UTF-8", {"search.graph": GOOD_SG.encode().replace(b"out=c", b"out=\xff")},
         "mtplug: error: DIR/search.graph:3: invalid UTF-8 at byte 82: ...'d=-1 fscore=0 covered=1-1 out=\\xff'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "kbest"),
    Case("Moses search graph", "CRLF line ends", {"search.graph": GOOD_SG.replace("\n", "\r\n")},
         ACCEPTED + "a CR before the newline is dropped", "kbest"),
    Case("Moses search graph", "truncated gzip", {"search.graph": _gz_cut(GOOD_SG)},
         "mtplug: error: DIR/search.graph: corrupt or truncated compressed data (Compressed file ended before the end-of-stream marker was reached)", "kbest"),
    Case("Moses search graph", "empty file", {"search.graph": ""},
         "mtplug: error: DIR/search.graph: empty file: expected PLF lattices (lines starting with '(') or a Moses search graph (lines with 'hyp='), or a directory of per-sentence forests", "kbest"),
    # ---------------------------------------------------------------- Moses hypergraph
    Case("Moses hypergraph (kbmira --hgdir)", "wrong header", _hg(GOOD_HG.replace(" ||| source-covered", "")),
         "kbmira: error: DIR/hg/0.gz:1: expected the header '# target ||| features ||| source-covered', got '# target ||| features'", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "fewer edges than the counts announce",
         _hg(GOOD_HG.replace("3 3", "3 4", 1)),
         "kbmira: error: DIR/hg/0.gz:2: the header announces 4 edges, the 3 vertices have 3", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "more edges than the counts announce",
         _hg(GOOD_HG.replace("3 3", "3 2", 1)),
         "kbmira: error: DIR/hg/0.gz:11: more edges than the 2 the header announces", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "fewer vertices than the counts announce",
         _hg(GOOD_HG.replace("3 3", "4 3", 1)),
         "kbmira: error: DIR/hg/0.gz:12: unexpected end of file: expected vertex 3 of the 4 the header announces", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "more vertices than the counts announce",
         _hg(GOOD_HG.replace("3 3", "2 3", 1)),
         "kbmira: error: DIR/hg/0.gz:10: unexpected line after the last of the 2 vertices", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "non-numeric edge count",
         _hg(GOOD_HG.replace("# node 1\n1\n", "# node 1\none\n")),
         "kbmira: error: DIR/hg/0.gz:7: expected the number of edges of vertex 1, got 'one'", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "truncated line",
         _hg(GOOD_HG.replace(HG_EDGE, "[0] a b c ||| LM0=-1 Word\n")),
         "kbmira: error: DIR/hg/0.gz:8: expected an edge 'target ||| features ||| source-covered', found 2 field(s)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "wrong separator",
         _hg(GOOD_HG.replace(HG_EDGE, HG_EDGE.replace("|||", "||"))),
         "kbmira: error: DIR/hg/0.gz:8: expected an edge 'target ||| features ||| source-covered', found 1 field(s)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "extra field", _hg(GOOD_HG.replace(HG_EDGE, HG_EDGE[:-1] + " ||| 1\n")),
         "kbmira: error: DIR/hg/0.gz:8: expected an edge 'target ||| features ||| source-covered', found 4 field(s)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "feature without '='", _hg(GOOD_HG.replace("LM0=-1", "LM0 -1")),
         "kbmira: error: DIR/hg/0.gz:8: expected a feature name=value, got 'LM0'", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "non-numeric value", _hg(GOOD_HG.replace("LM0=-1", "LM0=x")),
         "kbmira: error: DIR/hg/0.gz:8: expected a number for 'LM0', got 'x'", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "NaN value", _hg(GOOD_HG.replace("LM0=-1", "LM0=nan")),
         "kbmira: error: DIR/hg/0.gz:8: value for 'LM0' is 'nan'; expected a finite number", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "infinite value", _hg(GOOD_HG.replace("LM0=-1", "LM0=inf")),
         "kbmira: error: DIR/hg/0.gz:8: value for 'LM0' is 'inf'; expected a finite number", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "a feature twice on one edge",
         _hg(GOOD_HG.replace("LM0=-1", "LM0=-1 LM0=-2")),
         ACCEPTED + "the last value counts, as Moses's reader keeps it (SparseVector::set)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "a tail not before its head",
         _hg(GOOD_HG.replace(HG_EDGE, HG_EDGE.replace("[0]", "[1]"))),
         "kbmira: error: DIR/hg/0.gz:8: [1] refers to vertex 1, which does not come before vertex 1 (tails come first: the file must be bottom-up)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "a vertex without edges",
         _hg(GOOD_HG.replace("# node 1\n1\n" + HG_EDGE, "# node 1\n0\n").replace("3 3", "3 2", 1)),
         "kbmira: error: DIR/hg/0.gz:7: vertex 1 has no incoming edge", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "non-numeric source-covered",
         _hg(GOOD_HG.replace(HG_EDGE, HG_EDGE.replace("||| 3", "||| three"))),
         "kbmira: error: DIR/hg/0.gz:8: expected the number of source words covered (0 to 2147483647), got 'three'", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "blank line", _hg(GOOD_HG.replace("# node 2\n", "\n# node 2\n")),
         "kbmira: error: DIR/hg/0.gz:9: expected the number of edges of vertex 2, got ''", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "invalid UTF-8", _hg(GOOD_HG.encode().replace(b"a b c", b"a \xff c")),
         "kbmira: error: DIR/hg/0.gz:8: invalid UTF-8 at byte 6: '[0] a \\xff c ||| LM0=-1 WordPenalty0=-3'...; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "CRLF line ends", _hg(GOOD_HG.replace("\n", "\r\n")),
         ACCEPTED + "a CR before the newline is dropped", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "truncated gzip", {**_hg(), "hg/0.gz": _gz_cut(GOOD_HG)},
         "kbmira: error: DIR/hg/0.gz: corrupt or truncated compressed data (Compressed file ended before the end-of-stream marker was reached)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "empty file", _hg(""),
         "kbmira: error: DIR/hg/0.gz:1: expected the header '# target ||| features ||| source-covered', got an empty file", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "sentence missing", {"hg/0.gz": _gz(GOOD_HG)},
         "kbmira: error: DIR/hg: sentence 1 has no forest (1 of 2 sentences have none)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "sentence beyond the references", _hg(**{"hg/2.gz": _gz(GOOD_HG)}),
         "kbmira: error: DIR/hg/2.gz: sentence id 2 has no reference (the references have 2 sentences)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "two files for one sentence", _hg(**{"hg/1.txt": GOOD_HG}),
         "kbmira: error: DIR/hg/1.txt: a second file for sentence 1 (the first is DIR/hg/1.gz)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "a file not named by a sentence id", _hg(**{"hg/notes.txt": "x\n"}),
         "kbmira: error: DIR/hg/notes.txt: expected a hypergraph file named <sentence id> or <sentence id>.<ext>", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "Moses's weights file in the directory",
         _hg(**{"hg/weights": "LM0= 1\n"}),
         ACCEPTED + "skipped, as kbmira skips it (Moses writes it next to the hypergraphs)", "hgdir"),
    Case("Moses hypergraph (kbmira --hgdir)", "empty directory", {"hg/": None},
         "kbmira: error: DIR/hg: no hypergraph files (expected <id>.gz, <id>.txt or <id>, as Moses writes them)", "hgdir"),
    # ---------------------------------------------------------------- cdec JSON forest
    Case("cdec JSON forest", "truncated file", _json(GOOD_JSON[:150]),
         "mtplug: error: DIR/forests/0.json:1: invalid JSON: Unterminated string starting at (column 148)", "kbest"),
    Case("cdec JSON forest", "unbalanced braces", _json(GOOD_JSON.replace("}}\n", "}\n")),
         "mtplug: error: DIR/forests/0.json:2: invalid JSON: Expecting ',' delimiter (column 1)", "kbest"),
    Case("cdec JSON forest", "wrong separator", _json(GOOD_JSON.replace('"features":', '"features";')),
         "mtplug: error: DIR/forests/0.json:1: invalid JSON: Expecting ':' delimiter (column 74)", "kbest"),
    Case("cdec JSON forest", "edge without a rule", _json(GOOD_JSON.replace(',"rule":1}', "}")),
         "mtplug: error: DIR/forests/0.json: edge 0 has no rule (forests written without rules cannot be read)", "kbest"),
    Case("cdec JSON forest", "unknown key", _json(GOOD_JSON.replace('"rule":1}', '"rule":1,"prob":1}')),
         "mtplug: error: DIR/forests/0.json: edge 0: unexpected key 'prob'; expected tail, spans, feats, rule", "kbest"),
    Case("cdec JSON forest", "value without a feature", _json(GOOD_JSON.replace("[0,-1.5,1,1]", "[0,-1.5,1]")),
         "mtplug: error: DIR/forests/0.json: edge 0: 'feats' must be a flat list of feature, value pairs", "kbest"),
    Case("cdec JSON forest", "non-numeric value", _json(GOOD_JSON.replace("[0,-1.5,1,1]", '[0,"x",1,1]')),
         "mtplug: error: DIR/forests/0.json: edge 0: the value of feature 'LM' must be a number, got 'x'", "kbest"),
    Case("cdec JSON forest", "NaN value", _json(GOOD_JSON.replace("[0,-1.5,1,1]", "[0,NaN,1,1]")),
         "mtplug: error: DIR/forests/0.json:1: invalid JSON: NaN is not a number; expected a finite value (column 138)", "kbest"),
    Case("cdec JSON forest", "infinite value", _json(GOOD_JSON.replace("[0,-1.5,1,1]", "[0,-Infinity,1,1]")),
         "mtplug: error: DIR/forests/0.json:1: invalid JSON: -Infinity is not a number; expected a finite value (column 138)", "kbest"),
    Case("cdec JSON forest", "value beyond a double", _json(GOOD_JSON.replace("[0,-1.5,1,1]", "[0,1e999,1,1]")),
         "mtplug: error: DIR/forests/0.json: edge 0: the value of feature 'LM' overflows a double; expected a finite number", "kbest"),
    Case("cdec JSON forest", "a feature twice on one edge", _json(GOOD_JSON.replace("[0,-1.5,1,1]", "[0,-1.5,0,-2]")),
         ACCEPTED + "the last value counts, as cdec's reader sets it", "kbest"),
    Case("cdec JSON forest", "feature index out of range", _json(GOOD_JSON.replace("[0,-1.5,1,1]", "[0,-1.5,5,1]")),
         "mtplug: error: DIR/forests/0.json: edge 0: feature index 5 is not in 'features' (2 names)", "kbest"),
    Case("cdec JSON forest", "a tail not before its head", _json(GOOD_JSON.replace('"tail":[0]', '"tail":[1]')),
         "mtplug: error: DIR/forests/0.json: node 1: its in-edge 1 has tail 1, which is not an earlier node (nodes must be in topological order)", "kbest"),
    Case("cdec JSON forest", "an edge of no node",
         _json(GOOD_JSON.replace('"node":{"in_edges":[1],"cat":"S"}', '"node":{"in_edges":[],"cat":"S"}')),
         "mtplug: error: DIR/forests/0.json: edge 1 is not an in-edge of any node", "kbest"),
    Case("cdec JSON forest", "rule refers to a tail the edge lacks", _json(GOOD_JSON.replace("[1] c", "[2] c")),
         "mtplug: error: DIR/forests/0.json: edge 1: the rule's target side refers to [2] but the edge has 1 tails", "kbest"),
    Case("cdec JSON forest", "line breaks and blank lines", _json(GOOD_JSON.replace(',"edges"', ',\n\n"edges"')),
         ACCEPTED + "JSON whitespace may come between any tokens (cdec writes one line)", "kbest"),
    Case("cdec JSON forest", "invalid UTF-8", _json(GOOD_JSON.encode().replace(b"a b", b"a \xff")),
         'mtplug: error: DIR/forests/0.json:1: invalid UTF-8 at byte 29: \'{"rules":[1,"[X] ||| a ||| a \\xff",2,"[S] ||| [X,1] c ||| [1] \'...; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8', "kbest"),
    Case("cdec JSON forest", "CRLF line ends",
         _json(GOOD_JSON.replace(',"edges"', ',\r\n"edges"').replace("\n", "\r\n")),
         ACCEPTED + "a CR is JSON whitespace", "kbest"),
    Case("cdec JSON forest", "truncated gzip", {"forests/0.json.gz": _gz_cut(GOOD_JSON)},
         "mtplug: error: DIR/forests/0.json.gz: corrupt or truncated compressed data (Compressed file ended before the end-of-stream marker was reached)", "kbest"),
    Case("cdec JSON forest", "empty file", _json(""),
         "mtplug: error: DIR/forests/0.json: empty file; expected a cdec JSON forest (one JSON object)", "kbest"),
    # ---------------------------------------------------------------- cdec binary forest
    Case("cdec binary forest (cdec -O)", "truncated gzip", {"forests/0.bin.gz": _gz_cut(CH_INSIDE)},
         "mtplug: error: DIR/forests/0.bin.gz: corrupt or truncated compressed data (Compressed file ended before the end-of-stream marker was reached)", "kbest"),
    Case("cdec binary forest (cdec -O)", "truncated archive", _bin(CH_INSIDE[:1000]),
         "mtplug: error: DIR/forests/0.bin.gz: expected the tail count of edge 5 at byte 992 of the archive, found 2, more than the 6 bytes left can hold", "kbest"),
    Case("cdec binary forest (cdec -O)", "garbage bytes", _bin(b"\x00\x17garbage, not a forest\xfe\xff" * 4),
         "mtplug: error: DIR/forests/0.bin.gz: expected a Boost archive signature 'serialization::archive' (a cdec -O forest) at byte 0 of the archive, found b'\\x00\\x17garbage, not a forest\\xfe\\xff\\x00\\x17gar'", "kbest"),
    Case("cdec binary forest (cdec -O)", "trailing bytes", _bin(CH_INSIDE + b"\x00"),
         "mtplug: error: DIR/forests/0.bin.gz: expected the end of the archive at byte 1424 of the archive, found 1 more byte", "kbest"),
    Case("cdec binary forest (cdec -O)", "a later Boost library version",
         _bin(_patch(CH_INSIDE, 0x1E, b"\x0a\x00", b"\x16\x00")),
         "mtplug: error: DIR/forests/0.bin.gz: expected Boost archive library version 10 to 21 (the versions whose layout of cdec's forests is known) at byte 30 of the archive, found version 22", "kbest"),
    Case("cdec binary forest (cdec -O)", "an older Boost library version",
         _bin(_patch(CH_INSIDE, 0x1E, b"\x0a\x00", b"\x09\x00")),
         "mtplug: error: DIR/forests/0.bin.gz: expected Boost archive library version 10 to 21 (the versions whose layout of cdec's forests is known) at byte 30 of the archive, found version 9", "kbest"),
    Case("cdec binary forest (cdec -O)", "Boost 1.74's library version 18",
         _bin(_patch(CH_INSIDE, 0x1E, b"\x0a\x00", b"\x12\x00")),
         ACCEPTED + "library versions 10 to 21 (Boost 1.53 on) lay out cdec's forests the same", "kbest"),
    Case("cdec binary forest (cdec -O)", "absurd node count",
         _bin(_patch(CH_INSIDE, 0x2D, b"\x06\x00\x00\x00", b"\xff\xff\xff\x7f")),
         "mtplug: error: DIR/forests/0.bin.gz: expected a node count >= 1 and an edge count that the rest of the archive can hold at byte 45 of the archive, found 2147483647 nodes, 8 edges in 1371 bytes", "kbest"),
    Case("cdec binary forest (cdec -O)", "NaN value",
         _bin(_patch(CH_INSIDE, 0x22D, struct.pack("<d", -0.8), struct.pack("<d", math.nan))),
         "mtplug: error: DIR/forests/0.bin.gz: expected a finite value of feature 'f1' in the features of edge 1 at byte 557 of the archive, found nan", "kbest"),
    Case("cdec binary forest (cdec -O)", "infinite value",
         _bin(_patch(CH_INSIDE, 0x22D, struct.pack("<d", -0.8), struct.pack("<d", -math.inf))),
         "mtplug: error: DIR/forests/0.bin.gz: expected a finite value of feature 'f1' in the features of edge 1 at byte 557 of the archive, found -inf", "kbest"),
    Case("cdec binary forest (cdec -O)", "a tail not before its head",
         _bin(_patch(CH_INSIDE, 0x1CB, b"\x00\x00\x00\x00", b"\x01\x00\x00\x00")),
         "mtplug: error: DIR/forests/0.bin.gz: expected tails of edge 1 before its head node 1 (nodes in topological order) at byte 459 of the archive, found [1]", "kbest"),
    Case("cdec binary forest (cdec -O)", "invalid UTF-8 word", _bin(_patch(CH_INSIDE, 0x1AA, b"a", b"\xff")),
         "mtplug: error: DIR/forests/0.bin.gz: expected a target word of rule 0 (edge 0) in UTF-8 at byte 426 of the archive, found invalid UTF-8 at byte 426", "kbest"),
    Case("cdec binary forest (cdec -O)", "not gzipped", {"forests/0.bin.gz": CH_INSIDE},
         ACCEPTED + "gzip is told by its magic number, not by the name; a plain archive is read as it is", "kbest"),
    Case("cdec binary forest (cdec -O)", "empty file", {"forests/0.bin.gz": b""},
         "mtplug: error: DIR/forests/0.bin.gz: expected the archive signature length 22 at byte 0 of the archive, found the end of the data (0 bytes left)", "kbest"),
    # ---------------------------------------------------------------- forest directory
    Case("forest directory", "empty directory", {"forests/": None},
         "mtplug: error: DIR/forests: no forest files (expected <id>.bin.gz, <id>.json.gz or Moses hypergraph files <id>.gz)", "kbest"),
    Case("forest directory", "two files for one sentence", {**_json(), "forests/1.bin.gz": _gz(CH_INSIDE)},
         "mtplug: error: DIR/forests: two forests for sentence 1: 1.bin.gz and 1.json", "kbest"),
    Case("forest directory", "a forest missing for a referenced sentence", {"forests/0.json": GOOD_JSON},
         "mtplug: error: DIR/forests: sentence 1 has no forest (1 of 2 sentences have none)", "forestmert"),
    Case("forest directory", "a forest beyond the references", {**_json(), "forests/2.json": GOOD_JSON},
         "mtplug: error: DIR/forests/2.json: sentence id 2 has no reference (the references have 2 sentences)", "forestmert"),
    Case("forest directory", "files of other names", {**_json(), "forests/README": "forests of dev\n"},
         ACCEPTED + "ignored: the forests are N.bin.gz, N.json, N.json.gz and the Moses hypergraphs N, N.gz, N.txt "
                    "(N a sentence id)", "forestmert"),
    Case("forest directory", "formats mixed", {"forests/0.json": GOOD_JSON, "forests/1.gz": _gz(GOOD_HG)},
         ACCEPTED + "each file is read as its name says (here a cdec JSON forest and a Moses hypergraph)", "forestmert"),
    # ---------------------------------------------------------------- rerank, evaluate
    Case("n-best list (mtplug rerank)", "sentence id missing in the middle",
         {"nbest": NBEST_LINE[0] + NBEST_LINE[1].replace("1 |||", "2 |||", 1)}, "mtplug: error: DIR/nbest: sentence 1 has no hypotheses (1 of 3 sentences are empty); every id from 0 to 2 needs at least one, or its 1-best line would be missing", "rerank"),
    Case("n-best list (mtplug rerank)", "too few fields", {"nbest": NBEST_LINE[0] + "1 ||| x y\n"}, "mtplug: error: DIR/nbest:2: expected at least 3 fields 'id ||| hypothesis ||| features' (a score and more fields may follow, as Moses's extractor reads them), found fewer", "rerank"),
    Case("n-best list (mtplug rerank)", "weights for another number of columns", {"init": "0.5 0.2\n"}, "mtplug: error: DIR/init:1: has 2 values, expected 3 (one per feature)",
         "rerank"),
    Case("n-best list (mtplug rerank)", "NaN feature value", {"nbest": NBEST_LINE[0].replace("-1.5", "nan") + NBEST_LINE[1]},
         "mtplug: error: DIR/nbest:1: feature value 'nan' is not finite (NaN or infinity)", "rerank"),
    Case("n-best list (mtplug rerank)", "last line cut", {"nbest": NBEST_LINE[0] + "1 ||| x y ||| LM0= -2 TM0= 0.5 1.2"}, "mtplug: error: DIR/nbest:2: expected 4 '|||'-separated fields, as line 1 has, found 3: a line cut short (did the program writing the file stop in the middle of it?)",
         "rerank"),
    Case("n-best list (mtplug rerank)", "last line without its newline", {"nbest": GOOD_NBEST[:-1]},
         ACCEPTED + "a last line that has every field the others have is whole", "rerank"),
    # ---------------------------------------------------------------- neural n-best lists, join-features
    Case("fairseq n-best", "score not a number", {"nbest": "H-0\tx\ta b c\nD-0\t-1\ta b c\n"}, "mtplug: error: DIR/nbest:1: expected a number for 'score', got 'x'", "fairseq"),
    Case("fairseq n-best", "NaN score", {"nbest": "H-0\tnan\ta b c\nD-0\tnan\ta b c\n"}, "mtplug: error: DIR/nbest:1: value for 'score' is 'nan'; expected a finite number", "fairseq"),
    Case("fairseq n-best", "H line without D line", {"nbest": "H-0\t-1\ta b c\nH-1\t-1\tx y\nD-1\t-1\tx y\n"}, 'mtplug: error: DIR/nbest:1: H-0 has no D-0 line after it (older fairseq writes none: read the H lines with --fairseq-text H)',
         "fairseq"),
    Case("fairseq n-best", "D line of another id", {"nbest": "H-0\t-1\ta b c\nD-1\t-1\tx y\n"}, 'mtplug: error: DIR/nbest:2: D-1 line without the H-1 line of its hypothesis before it', "fairseq"),
    Case("fairseq n-best", "log lines only", {"nbest": "2024-05-01 10:00:00 | INFO | fairseq_cli.generate | done\n"}, 'mtplug: error: DIR/nbest: empty file: no hypotheses',
         "fairseq"),
    Case("fairseq n-best", "sentences out of order", {"nbest": "H-1\t-1\tx y\nD-1\t-1\tx y\nH-0\t-1\ta b c\n"
                                                      "D-0\t-1\ta b c\n"}, ACCEPTED + "sorted by id, as fairseq "
         "prints sentences in the order its batches finish", "fairseq"),
    Case("fairseq n-best", "P line cut (--fairseq-positional)", {"nbest": "H-0\t-1\ta b c\nD-0\t-1\ta b c\nP-0\t-0.2 -0.3 -0.1 -0.4\n"
                                                               "H-1\t-1\tx y\nD-1\t-1\tx y\nP-1\t-0.5 -0."},
         'mtplug: error: DIR/nbest:6: expected at least 3 positional scores (one per word of the hypothesis and one for </s>), found 2: a line cut short?', "fairseqpos"),
    Case("Marian n-best", "no total score field", {"nbest": "0 ||| a b c ||| F0= -1.2\n1 ||| x y ||| F0= -2\n"}, "mtplug: error: DIR/nbest:1: expected 'id ||| hypothesis ||| features ||| total' (alignment and WordScores fields may come before the features), found 3 field(s)",
         "marian"),
    Case("Marian n-best", "NaN total", {"nbest": "0 ||| a b c ||| F0= -1.2 ||| nan\n"}, "mtplug: error: DIR/nbest:1: value for 'total' is 'nan'; expected a finite number", "marian"),
    Case("Marian n-best", "ids out of order", {"nbest": "1 ||| x y ||| F0= -2 ||| -1\n0 ||| a b c ||| F0= -1 ||| -1\n"},
         "mtplug: error: DIR/nbest:2: sentence id 0 is smaller than the previous line's: n-best lists must be sorted by sentence", "marian"),
    Case("Marian n-best", "alignment and word scores", {"nbest": "0 ||| a b c ||| 0-0 1-1 2-2 ||| WordScores= -0.1 -0.2 "
                                                        "-0.3 -0.1 ||| F0= -0.7 ||| -0.175\n1 ||| x y ||| 0-0 1-1 ||| "
                                                        "WordScores= -0.1 -0.2 -0.1 ||| F0= -0.4 ||| -0.13\n"},
         ACCEPTED + "the fields between the hypothesis and the features are skipped", "marian"),
    Case("JSON-lines n-best", "not JSON", {"nbest": '{"id": 0, "hyp": "a b c", "features": {"f": 1}\n'}, 'mtplug: error: DIR/nbest:1: expected a JSON object {"id", "hyp", "features"}: Expecting \',\' delimiter: line 1 column 47 (char 46)', "jsonl"),
    Case("JSON-lines n-best", "key missing", {"nbest": '{"id": 0, "features": {"f": 1}}\n'},
         'mtplug: error: DIR/nbest:1: expected the keys "id", "hyp" and "features"; hyp missing', "jsonl"),
    Case("JSON-lines n-best", "NaN feature", {"nbest": '{"id": 0, "hyp": "a b c", "features": {"f": NaN}}\n'},
         'mtplug: error: DIR/nbest:1: expected a JSON object {"id", "hyp", "features"}: NaN is not a finite number',
         "jsonl"),
    Case("JSON-lines n-best", "other features than the first line's",
         {"nbest": '{"id": 0, "hyp": "a b c", "features": {"f": 1}}\n{"id": 1, "hyp": "x y", "features": {"g": 1}}\n'},
         'mtplug: error: DIR/nbest:2: expected the features of line 1 (f), got g', "jsonl"),
    Case("JSON-lines n-best", "a key twice", {"nbest": '{"id": 0, "hyp": "a b c", "features": {"f": 1}, "id": 1}\n'}, 'mtplug: error: DIR/nbest:1: expected each key once in an object, got "id" twice (JSON would keep the last value)',
         "jsonl"),
    Case("JSON-lines n-best", "a terminal escape in a feature name",
         {"nbest": '{"id": 0, "hyp": "a b c", "features": {"f": 1}}\n{"id": 1, "hyp": "x y", "features": {"\\u001b[2K": 1}}\n'},
         'mtplug: error: DIR/nbest:2: expected the features of line 1 (f), got \\x1b[2K', "jsonl"),
    Case("feature file (mtplug join-features)", "a value too few", {"values": "1\n"}, 'mtplug: error: DIR/values: has 1 value, DIR/nbest has 2 hypotheses', "join"),
    Case("feature file (mtplug join-features)", "NaN value", {"values": "1\nnan\n"},
         "mtplug: error: DIR/values:2: value is 'nan'; expected a finite number", "join"),
    Case("feature file (mtplug join-features)", "(id, rank) missing", {"values": "0 0 1\n"}, 'mtplug: error: DIR/values: no value for sentence 1, rank 0 of DIR/nbest (1 of its 2 hypotheses have none)', "join"),
    Case("feature file (mtplug join-features)", "(id, rank) twice", {"values": "0 0 1\n1 0 2\n0 0 3\n"}, 'mtplug: error: DIR/values:3: sentence 0, rank 0 given twice (first on line 1)', "join"),
    Case("feature file (mtplug join-features)", "(id, rank) not in the n-best", {"values": "0 0 1\n1 1 2\n"}, 'mtplug: error: DIR/values:2: sentence 1, rank 1 is not in DIR/nbest (sentence 1 has 1 hypothesis, ranks from 0)', "join"),
    Case("feature file (mtplug join-features)", "name already in the n-best", {"nbest": GOOD_NBEST.replace("TM0=", "X=")},
         'mtplug: error: DIR/nbest: already has a feature X: name the joined feature otherwise', "join"),
    Case("translations (mtplug evaluate)", "fewer lines than references", {"hyp2": "a b c\n"}, "mtplug: error: DIR/hyp2: has 1 line, expected 2 (one per reference sentence)", "evaluate"),
    Case("translations (mtplug evaluate)", "invalid UTF-8", {"hyp2": b"a \xff\nx\n"}, "mtplug: error: DIR/hyp2:1: invalid UTF-8 at byte 2: 'a \\xff'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "evaluate"),
    Case("translations (mtplug evaluate)", "empty file", {"hyp": ""}, "mtplug: error: DIR/hyp: has 0 lines, expected 2 (one per reference sentence)", "evaluate"),
    # ---------------------------------------------------------------- M2 (grammatical error correction)
    Case("M2", "invalid UTF-8", {"gold.m2": GOOD_M2.replace("a q c", "a q\udcff c").encode("utf-8", "surrogateescape")},
         "mtplug: error: DIR/gold.m2:1: invalid UTF-8 at byte 5: 'S a q\\xff c'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "m2"),
    Case("M2", "invalid UTF-8 (evaluator)", {"gold.m2": GOOD_M2.replace("a q c", "a q\udcff c").encode("utf-8", "surrogateescape")},
         "evaluator: error: DIR/gold.m2:1: invalid UTF-8 at byte 5: 'S a q\\xff c'; if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8", "m2eval"),
    Case("M2", "edit start after its end", {"gold.m2": GOOD_M2.replace("A 1 2", "A 2 1")}, "mtplug: error: DIR/gold.m2:2: expected two word offsets 'start end' after 'A ', 0 <= start <= end <= 3 (the words of the S line on line 1), got '2 1'", "m2"),
    Case("M2", "edit start after its end (evaluator)", {"gold.m2": GOOD_M2.replace("A 1 2", "A 2 1")}, "evaluator: error: DIR/gold.m2:2: expected two word offsets 'start end' after 'A ', 0 <= start <= end <= 3 (the words of the S line on line 1), got '2 1'", "m2eval"),
    Case("M2", "edit beyond the sentence", {"gold.m2": GOOD_M2.replace("A 1 2", "A 1 4")}, "mtplug: error: DIR/gold.m2:2: expected two word offsets 'start end' after 'A ', 0 <= start <= end <= 3 (the words of the S line on line 1), got '1 4'", "m2"),
    Case("M2", "offset beyond any integer", {"gold.m2": GOOD_M2.replace("A 1 2", "A 1 99999999999999999999")}, "mtplug: error: DIR/gold.m2:2: expected two word offsets 'start end' after 'A ', 0 <= start <= end <= 3 (the words of the S line on line 1), got '1 99999999999999999999'", "m2"),
    Case("M2", "offset not a number", {"gold.m2": GOOD_M2.replace("A 1 2", "A one 2")}, "mtplug: error: DIR/gold.m2:2: expected two word offsets 'start end' after 'A ', 0 <= start <= end <= 3 (the words of the S line on line 1), got 'one 2'", "m2"),
    Case("M2", "one offset", {"gold.m2": GOOD_M2.replace("A 1 2", "A 1")}, "mtplug: error: DIR/gold.m2:2: expected two word offsets 'start end' after 'A ', 0 <= start <= end <= 3 (the words of the S line on line 1), got '1'", "m2"),
    Case("M2", "fields missing", {"gold.m2": GOOD_M2.replace(M2_EDIT[0], "A 1 2|||Vform|||b\n")}, "mtplug: error: DIR/gold.m2:2: expected 'A start end|||type|||correction|||REQUIRED|||-NONE-|||annotator' (6 fields separated by |||), got 3 fields", "m2"),
    Case("M2", "annotator not a number", {"gold.m2": GOOD_M2.replace(M2_EDIT[0], "A 1 2|||Vform|||b|||REQUIRED|||-NONE-|||x\n")}, "mtplug: error: DIR/gold.m2:2: expected the annotator (field 6) to be an integer >= 0, got 'x'", "m2"),
    Case("M2", "annotator ids skip one", {"gold.m2": GOOD_M2.replace(M2_EDIT[0], M2_EDIT[0] + "A 0 1|||Vform|||b|||REQUIRED|||-NONE-|||2\n")}, 'mtplug: error: DIR/gold.m2:3: annotator 2, but annotator 1 is named on no line up to this sentence: expected annotator ids 0, 1, 2, ... (Moses indexes its tables by them)', "m2"),
    Case("M2", "annotator id beyond any integer", {"gold.m2": GOOD_M2.replace(M2_EDIT[0], M2_EDIT[0] + "A 0 1|||Vform|||b|||REQUIRED|||-NONE-|||99999999999999999999\n")}, 'mtplug: error: DIR/gold.m2:3: annotator 99999999999999999999, but annotator 1 is named on no line up to this sentence: expected annotator ids 0, 1, 2, ... (Moses indexes its tables by them)', "m2"),
    Case("M2", "A line before the first S line", {"gold.m2": M2_EDIT[0] + GOOD_M2}, "mtplug: error: DIR/gold.m2:1: an A line before the first S line: expected 'S <source sentence>' first", "m2"),
    Case("M2", "S line without a sentence", {"gold.m2": "S\n" + GOOD_M2}, "mtplug: error: DIR/gold.m2:1: an S line without a sentence: expected 'S <source sentence>' (Moses skips such a line, and every later sentence would shift by one)", "m2"),
    Case("M2", "a line of another kind", {"gold.m2": "# gold edits\n" + GOOD_M2}, "mtplug: error: DIR/gold.m2:1: expected an 'S <sentence>' line, an 'A start end|||type|||correction|||REQUIRED|||-NONE-|||annotator' line or a blank line, got '# gold edits'", "m2"),
    Case("M2", "a sentence fewer than hypotheses", {"gold.m2": "S a q c\n" + M2_EDIT[0]}, 'mtplug: error: DIR/hyp:2: more lines than the references have (1)', "m2"),
    Case("M2", "a sentence more than hypotheses", {"gold.m2": GOOD_M2 + "S p q\n"}, 'mtplug: error: DIR/hyp: has 2 lines, the references have 3', "m2"),
    Case("M2", "empty file", {"gold.m2": ""}, "mtplug: error: DIR/gold.m2: expected at least one 'S <source sentence>' line, found none", "m2"),
    Case("M2", "noop edit", {"gold.m2": GOOD_M2.replace(M2_EDIT[1], "A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0\n")},
         ACCEPTED + "its offsets are not read (ERRANT writes -1 -1)", "m2"),
    Case("M2", "a seventh field", {"gold.m2": GOOD_M2.replace(M2_EDIT[0], M2_EDIT[0].rstrip() + "|||extra\n")},
         ACCEPTED + "ignored, as Moses ignores it (the annotator is the sixth field)", "m2"),
    Case("M2", "CRLF line ends", {"gold.m2": GOOD_M2.replace("\n", "\r\n")},
         ACCEPTED + "a CR before the newline is dropped (Moses would keep it in the last source word, which "
         "then equals no hypothesis word)", "m2"),
]


def write_case(case: Case, d) -> None:
    """Write the case's files (good defaults for the others) into directory ``d``."""
    import os

    for name, content in defaults(case).items():
        path = os.path.join(d, *name.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if name.endswith("/"):
            continue
        data = content.encode("utf-8") if isinstance(content, str) else content
        data = data.replace(b"DIR/", os.path.join(os.fsencode(d), b""))
        with open(path, "wb") as fh:
            fh.write(data)
    if "nbest.gz" in case.files:
        os.replace(os.path.join(d, "nbest.gz"), os.path.join(d, "nbest"))  # the reader sniffs gzip by content


def _cell(text: str) -> str:
    """``text`` for a Markdown table cell: a '|', even in a code span, would end the cell."""
    return text.replace("|", "\\|")


def page() -> str:
    """docs/bad-input.md."""
    out = [
        "# Bad input: what mtplug does with it",
        "",
        "Every reader turns malformed input into one error line on stderr, `mtplug: error: FILE:LINE: what "
        "was expected, what was found` (no line number when the problem is the whole file), exit status 2, "
        "and no output file is written or touched (outputs go to a temporary file in the same directory "
        "that is renamed only on success). The Moses programs in `moses_integration/` print the same "
        "messages with their own name (after the progress lines they always log). Nothing else escapes: "
        "no Python traceback on bad input.",
        "",
        "This page is generated from the test table `tests/reliability/bad_input_cases.py`; the test suite "
        "checks that each case prints exactly the message shown (`DIR/` is the input's directory).",
        "",
    ]
    kind = None
    for case in CASES:
        if case.kind != kind:
            kind = case.kind
            commands = dict.fromkeys(c.command for c in CASES if c.kind == kind)
            out += ["", f"## {kind}", "", "Read by " + "; ".join(READ_BY[c] for c in commands) + ".", "",
                    "| case | error |", "|---|---|"]
        if case.message.startswith(ACCEPTED):
            out.append(f"| {_cell(case.what)} | accepted: {_cell(case.message[len(ACCEPTED):])} |")
        elif case.message.startswith(WARNED):
            out.append(f"| {_cell(case.what)} | accepted with a warning: `{_cell(case.message[len(WARNED):])}` |")
        else:
            out.append(f"| {_cell(case.what)} | `{_cell(case.message)}` |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(page())
