"""The bad-input contract: every malformed-input case and the exact error the user sees.

One table (:data:`CASES`) drives both the test (tests/reliability/test_bad_input.py:
each case exits with status 2, prints exactly the recorded message, writes nothing;
the inputs accepted on purpose must succeed) and the documentation page docs/bad-input.md, regenerated with::

    python -m tests.reliability.bad_input_cases > docs/bad-input.md

(the test fails when the page is out of date). In messages, ``DIR/`` stands for the
directory of the input files.
"""

from __future__ import annotations

import gzip
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


ACCEPTED = "(accepted) "


@dataclass
class Case:
    kind: str          # the input kind (a section of the page)
    what: str          # the malformed case
    files: dict        # name -> str or bytes; the good defaults fill the rest
    message: str       # the exact stderr line (DIR/ = the files' directory), or ACCEPTED + why
    command: str = "nbest"  # which command reads the input (see command_line)


def command_line(case: Case, d: str) -> list[str]:
    """The mtplug arguments that read ``case``'s files from directory ``d`` (outputs in d/out)."""
    p = lambda name: f"{d}/{name}"  # noqa: E731
    if case.command == "nbest":
        return ["optimize", "none", "-q", "--nbest", p("nbest"), "--ref", p("ref"), "--init", p("init"),
                "--out", p("out")]
    if case.command == "mertdata":
        return ["optimize", "none", "-q", "--ffile", p("features.dat"), "--scfile", p("scores.dat"),
                "--init", p("init"), "--out", p("out")]
    if case.command == "score":
        return ["score", "-q", "--hyp", p("hyp"), "--ref", p("ref")]
    raise ValueError(case.command)


def defaults(case: Case) -> dict:
    base = {"nbest": GOOD_NBEST, "ref": GOOD_REF, "init": GOOD_INIT, "features.dat": GOOD_FEATURES,
            "scores.dat": GOOD_SCORES, "hyp": "a b c\nx y\n"}
    return {**base, **case.files}


def _gz_truncated() -> bytes:
    data = gzip.compress(GOOD_NBEST.encode() * 50)
    return data[: len(data) // 2]


CASES = [
    # ---------------------------------------------------------------- Moses n-best
    Case("Moses n-best", "truncated line (fields missing)", {"nbest": NBEST_LINE[0] + "1 ||| x y ||| LM0="}, 'mtplug: error: DIR/nbest:2: dense feature values do not match the layout of the first line (LM0_0 TM0_0 TM0_1)'),
    Case("Moses n-best", "wrong separator", {"nbest": "0 || a b c || LM0= -1.5 TM0= 1 2 || -1\n"}, "mtplug: error: DIR/nbest:1: expected 'id ||| hypothesis ||| features ||| score', found fewer than three '|||' fields"),
    Case("Moses n-best", "extra field", {"nbest": "0 ||| a b c ||| LM0= -1.5 TM0= 1 2 ||| -1 ||| x ||| y\n" + NBEST_LINE[1]}, ACCEPTED + 'Moses writes alignments and other fields after the score; they are ignored'),
    Case("Moses n-best", "non-numeric value", {"nbest": "0 ||| a b c ||| LM0= -1.5 TM0= one 2 ||| -1\n" + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:1: expected a number as feature value, got 'one'"),
    Case("Moses n-best", "NaN value", {"nbest": "0 ||| a b c ||| LM0= nan TM0= 1 2 ||| -1\n" + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:1: feature value 'nan' is not finite (NaN or infinity)"),
    Case("Moses n-best", "infinite value", {"nbest": "0 ||| a b c ||| LM0= -inf TM0= 1 2 ||| -1\n" + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:1: feature value '-inf' is not finite (NaN or infinity)"),
    Case("Moses n-best", "a feature twice on one line",
         {"nbest": "0 ||| a b c ||| LM0= -1.5 TM0= 1 2 LM0= 3 ||| -1\n" + NBEST_LINE[1]}, "mtplug: error: DIR/nbest:1: feature 'LM0' appears twice on one line (or a sparse name equals a dense column)"),
    Case("Moses n-best", "sentence ids out of order", {"nbest": NBEST_LINE[1] + NBEST_LINE[0]}, "mtplug: error: DIR/nbest:2: sentence id 0 is smaller than the previous line's: n-best lists must be sorted by sentence"),
    Case("Moses n-best", "sentence id beyond the references",
         {"nbest": GOOD_NBEST + "2 ||| q ||| LM0= -1 TM0= 1 1 ||| -1\n"}, 'mtplug: error: DIR/nbest:3: sentence id 2 has no reference (the references have 2 sentences)'),
    Case("Moses n-best", "sentence without hypotheses", {"nbest": NBEST_LINE[0]}, 'mtplug: error: DIR/nbest: sentence 1 has no hypotheses (1 of 2 sentences are empty)'),
    Case("Moses n-best", "empty hypothesis", {"nbest": "0 |||  ||| LM0= -1.5 TM0= 1 2 ||| -1\n" + NBEST_LINE[1]}, ACCEPTED + 'an empty translation is a hypothesis (length 0, no matching n-grams)'),
    Case("Moses n-best", "blank line", {"nbest": NBEST_LINE[0] + "\n" + NBEST_LINE[1]}, ACCEPTED + "blank lines are skipped, as Moses's extractor skips them"),
    Case("Moses n-best", "invalid UTF-8", {"nbest": b"0 ||| a \xff c ||| LM0= -1.5 TM0= 1 2 ||| -1\n" + NBEST_LINE[1].encode()}, "mtplug: error: DIR/nbest:1: invalid UTF-8 in '\\\\xff'"),
    Case("Moses n-best", "CRLF line ends", {"nbest": GOOD_NBEST.replace("\n", "\r\n")}, ACCEPTED + 'a CR before the newline is dropped'),
    Case("Moses n-best", "truncated gzip", {"nbest.gz": _gz_truncated()}, 'mtplug: error: DIR/nbest: corrupt or truncated compressed data (Compressed file ended before the end-of-stream marker was reached)'),
    Case("Moses n-best", "empty file", {"nbest": ""}, 'mtplug: error: DIR/nbest: empty file: no hypotheses'),
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
    Case("references", "invalid UTF-8", {"ref": b"a b c\nx \xfe z\n"}, 'mtplug: error: DIR/ref:2: invalid UTF-8 at byte 2'),
    Case("references", "empty file", {"ref": ""}, 'mtplug: error: DIR/ref: empty reference file'),
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
    Case("moses.ini", "no [weight] section", {"init": "[input-factors]\n0\n"}, "mtplug: error: DIR/init: no [weight] section; expected a '[weight]' line followed by 'Label= value' lines"),
    Case("moses.ini", "two [weight] sections", {"init": "[weight]\nLM0= 1\n[weight]\nTM0= 1 1\n"}, 'mtplug: error: DIR/init:3: second [weight] section (the first starts at line 1); expected one'),
    Case("moses.ini", "value missing", {"init": "[weight]\nLM0=\nTM0= 1 1\n"}, "mtplug: error: DIR/init:2: label 'LM0' has no value; expected 'Label= value [value ...]'"),
    Case("moses.ini", "feature never seen in the n-best", {"init": "[weight]\nLM0= 1\nTM0= 1 1\nXX0= 1\n"}, ACCEPTED + 'moses.ini holds untuneable features (UnknownWordPenalty0); they are kept and written back unchanged'),
    Case("weights file (name value)", "a name twice", {"init": "LM0_0 1\nLM0_0 2\n"}, "mtplug: error: DIR/init:2: feature 'LM0_0' given twice (first at line 1); expected each feature once"),
    Case("weights file (name value)", "weight naming a feature never seen", {"init": "LM0_0 1\nTM0_0 1\nTM0_1 1\nNope 1\n"}, 'mtplug: error: DIR/init: 1 weight(s) for features not in the feature list: Nope'),
    # ---------------------------------------------------------------- plain translations
    Case("translations (mtplug score)", "more lines than references", {"hyp": "a\nb\nc\n"}, 'mtplug: error: DIR/hyp:3: more lines than the references have (2)', "score"),
    Case("translations (mtplug score)", "invalid UTF-8", {"hyp": b"a \xff\nx\n"}, "mtplug: error: DIR/hyp:1: invalid UTF-8 in '\\\\xff'", "score"),
]


def write_case(case: Case, d) -> None:
    """Write the case's files (good defaults for the others) into directory ``d``."""
    import os

    for name, content in defaults(case).items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        with open(os.path.join(d, name), "wb") as fh:
            fh.write(data)
    if "nbest.gz" in case.files:
        os.replace(os.path.join(d, "nbest.gz"), os.path.join(d, "nbest"))  # the reader sniffs gzip by content


def page() -> str:
    """docs/bad-input.md."""
    out = [
        "# Bad input: what mtplug does with it",
        "",
        "Every reader turns malformed input into one error line on stderr, `mtplug: error: FILE:LINE: what "
        "was expected, what was found` (no line number when the problem is the whole file), exit status 2, "
        "and no output file is written or touched (outputs go to a temporary file in the same directory "
        "that is renamed only on success). The Moses programs in `moses_integration/` print the same "
        "messages with their own name. Nothing else escapes: no Python traceback on bad input.",
        "",
        "This page is generated from the test table `tests/reliability/bad_input_cases.py`; the test suite "
        "checks that each case prints exactly the message shown (`DIR/` is the input's directory).",
        "",
    ]
    kind = None
    for case in CASES:
        if case.kind != kind:
            kind = case.kind
            out += ["", f"## {kind}", "", "| case | error |", "|---|---|"]
        if case.message.startswith(ACCEPTED):
            out.append(f"| {case.what} | accepted: {case.message[len(ACCEPTED):]} |")
        else:
            out.append(f"| {case.what} | `{case.message}` |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(page())
