"""The metric layer: kernel objective and sentence scores equal the slow reference; the
line sweep is exact for every metric; parsing, stores, external scores and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.corpus import NbestCorpus
from mtplug.errors import InputError
from mtplug.formats.references import read_references
from mtplug.metrics.bleu import SENTENCE_BLEU_VARIANTS, sentence_bleu
from mtplug.metrics.layer import ExternalScores, Metric, Part, parse_metric
from mtplug.optimizers.line_search import sweep
from tests.reference.line_search_reference import intersections, metric_at, probe_points
from tests.reference.metric_reference import goodness, objective

#: part name -> (width, param) used by the random stores below
WIDTHS = {"bleu": (9, 1.0), "chrf": (9, 2.0), "ter": (2, 3.0), "wer": (2, 1.0), "cder": (2, 1.0),
          "per": (3, 1.0), "ext": (2, 4e9)}


@st.composite
def part_row(draw, name):
    """One valid statistics row of a part."""
    if name == "bleu":
        length = draw(st.integers(0, 8))
        row = []
        for order in range(1, 5):
            total = max(0, length - order + 1)
            row += [draw(st.integers(0, total)), total]
        return row + [draw(st.integers(0, 9))]
    if name == "chrf":
        row = []
        for _ in range(3):
            h, r = draw(st.integers(0, 9)), draw(st.integers(0, 9))
            row += [h, r, draw(st.integers(0, min(h, r)))]
        return row
    if name in ("ter", "wer", "cder"):
        return [draw(st.integers(0, 12)), draw(st.integers(0, 12))]
    if name == "per":
        ref, hyp = draw(st.integers(0, 9)), draw(st.integers(0, 9))
        return [draw(st.integers(0, min(ref, hyp))), hyp, ref]
    hi = draw(st.integers(-3, 2))
    return [hi, draw(st.integers(0, 2 ** 31 - 1))]


@st.composite
def metric_and_rows(draw, n_rows=None):
    names = draw(st.lists(st.sampled_from(sorted(WIDTHS)), min_size=1, max_size=4, unique=True))
    weights = [draw(st.sampled_from([1.0, 0.5, 0.25, -0.5, 2.0])) for _ in names]
    metric = Metric("test", tuple(Part(n, w, *WIDTHS[n]) for n, w in zip(names, weights)),
                    constant=draw(st.sampled_from([0.0, -1.0, 0.5])))
    n = n_rows if n_rows is not None else draw(st.integers(1, 6))
    rows = [sum((draw(part_row(nm)) for nm in names), []) for _ in range(n)]
    return metric, np.array(rows, dtype=np.int32)


@settings(max_examples=300, deadline=None)
@given(mr=metric_and_rows())
def test_objective_equals_the_reference(mr):
    metric, rows = mr
    totals = rows.sum(axis=0, dtype=np.int64)
    assert metric.objective(totals) == pytest.approx(objective(metric, totals), rel=1e-12, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(mr=metric_and_rows(), variant=st.sampled_from(sorted(SENTENCE_BLEU_VARIANTS)),
       n_sent=st.integers(1, 5), threads=st.sampled_from([1, 2]))
def test_row_objectives_equal_the_reference(mr, variant, n_sent, threads):
    metric, rows = mr
    got = metric.row_objectives(rows, variant, n_sentences=n_sent, threads=threads)
    for i, row in enumerate(rows):
        want, col = metric.constant, 0
        for p in metric.parts:
            part = row[col:col + p.width]
            if p.name == "bleu":
                g = float(sentence_bleu(part[None, :], variant, p.param)[0])
            elif p.name == "ext":
                g = n_sent * goodness("ext", part.tolist(), p.param)
            else:
                g = goodness(p.name, part.tolist(), p.param)
            want += p.weight * g
            col += p.width
        assert got[i] == pytest.approx(want, rel=1e-12, abs=1e-12)


@st.composite
def metric_store(draw):
    S = draw(st.integers(1, 4))
    sizes = [draw(st.integers(1, 7)) for _ in range(S)]
    n = sum(sizes)
    metric, rows = draw(metric_and_rows(n_rows=n))
    dense = np.array(draw(st.lists(st.lists(st.integers(-4, 4), min_size=3, max_size=3), min_size=n, max_size=n)),
                     dtype=float)
    return NbestCorpus.from_arrays(np.repeat(np.arange(S), sizes), dense, ["F_0", "F_1", "F_2"], rows, metric=metric)


vec = st.lists(st.integers(-3, 3), min_size=3, max_size=3).map(lambda v: np.array(v, dtype=float))


@settings(max_examples=150, deadline=None)
@given(corpus=metric_store(), w=vec, d=vec)
def test_line_sweep_is_exact_for_every_metric(corpus, w, d):
    a, b = corpus.scores(w), corpus.scores(d)
    xs, scores, _ = sweep(corpus, a, b)
    cuts = intersections(corpus, a, b)
    for g in probe_points(cuts):
        k = int(np.searchsorted(xs, g, side="right"))
        assert scores[k] == pytest.approx(metric_at(corpus, a, b, g), rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------------------- parsing
def test_parse_names_weights_and_scales():
    ter = parse_metric("TER")
    assert ter.name == "ter" and not ter.higher_is_better
    assert ter.value(0.75) == pytest.approx(25.0)          # objective 1 - TER; the value on 0-100
    assert ter.label == "TER" and parse_metric("chrf++").label == "chrF++"
    assert parse_metric("bleu").is_bleu and parse_metric("bleu").higher_is_better
    inter = parse_metric("bleu:0.6,ter:0.4")
    assert [(p.name, p.weight) for p in inter.parts] == [("bleu", 0.6), ("ter", 0.4)]
    assert inter.name == inter.label == "bleu:0.6,ter:0.4" and inter.higher_is_better
    equal = parse_metric("bleu,ter")                        # Moses: equal weights
    assert [p.weight for p in equal.parts] == [0.5, 0.5]
    ext = parse_metric("ext:/tmp/a:b.txt:0.3,bleu:0.7")
    assert ext.parts[0].source == "/tmp/a:b.txt" and ext.parts[0].weight == 0.3


def test_named_differences_have_their_meaning():
    # BLEU 30, TER 60: BLEU - TER = -30, (TER - BLEU) / 2 = 15 (minimised)
    bt, tb = parse_metric("bleu-ter"), parse_metric("ter-bleu")
    for m, want in ((bt, -30), (tb, 15)):
        obj = m.constant + sum(p.weight * g for p, g in zip(m.parts, (0.3, 1 - 0.6)))
        assert m.value(obj) == pytest.approx(want)
    assert bt.higher_is_better and not tb.higher_is_better


@pytest.mark.parametrize("text,message", [
    ("meteor", "unknown metric meteor"), ("bleu:x", "must be a number"), ("bleu:0.5,ter", "every part or to none"),
    ("bleu,bleu", "names a part twice"), ("ext:", "ext needs a file"), ("", "empty metric"),
    ("bleu:inf", "finite")])
def test_parse_errors_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        parse_metric(text)


# ---------------------------------------------------------------------------- stores
def test_store_of_an_interpolation_saves_and_grows(example_data, tmp_path):
    d = example_data
    refs = read_references([str(d / "ref.0")])
    nbest = str(d / "run1.best100.out.gz")
    corpus = NbestCorpus.from_nbest([nbest], refs, metric="bleu:0.5,chrf:0.5")
    plain = NbestCorpus.from_nbest([nbest], refs)
    assert corpus.n_hypotheses == plain.n_hypotheses
    np.testing.assert_array_equal(corpus.stats[:, :9], plain.stats)   # BLEU columns as the scanner makes them
    from mtplug.metrics.chrf import Chrf

    np.testing.assert_array_equal(corpus.stats[:, 9:], Chrf().store_stats(plain))
    w = np.linspace(-1, 1, corpus.n_features)
    rows = corpus.one_best(w)
    want = 0.5 * plain.bleu_of_rows(rows).score + 0.5 * Chrf().corpus_score(Chrf().store_stats(plain)[rows].sum(0))
    assert corpus.metric_of(w) == pytest.approx(want, rel=1e-12)
    path = str(tmp_path / "s.npz")
    corpus.save(path)
    loaded = NbestCorpus.load(path)
    assert loaded.metric == corpus.metric and loaded.metric_of(w) == corpus.metric_of(w)
    assert loaded.add_nbest([nbest]) == 0                    # the loaded store computes chrF for new lists


def test_external_scores_are_their_mean(example_data, tmp_path):
    d = example_data
    refs = read_references([str(d / "ref.0")])
    nbest = str(d / "run1.best100.out.gz")
    import gzip

    with gzip.open(nbest, "rt") as fh:
        sids = [int(line.split(" ||| ")[0]) for line in fh]
    values = np.round(np.sin(np.arange(len(sids))) * 3, 6)
    f = tmp_path / "comet.txt"
    f.write_text("".join(f"{v}\n" for v in values))
    corpus = NbestCorpus.from_nbest([nbest], refs, metric=f"ext:{f}")
    assert corpus.metric.parts[0].name == "ext" and corpus.n_stats == 2
    w = np.linspace(-1, 1, corpus.n_features)
    best = corpus.one_best(w)
    # rows keep file order here (no duplicate lines in this n-best), so row i is line i
    assert corpus.n_hypotheses == len(sids)
    assert corpus.metric_of(w) == pytest.approx(values[best].mean(), abs=1e-12)
    scores = corpus.metric.row_objectives(corpus.stats, n_sentences=corpus.n_sentences)
    np.testing.assert_allclose(scores, values, atol=1e-8)   # their mean over sentences is the corpus value
    # sentence ids, when given, must match
    f2 = tmp_path / "bad.txt"
    f2.write_text("".join(f"{s + (i == 5)} {v}\n" for i, (s, v) in enumerate(zip(sids, values))))
    with pytest.raises(InputError, match="sentence id 1 where the n-best line has 0") as e:
        NbestCorpus.from_nbest([nbest], refs, metric=f"ext:{f2}")
    assert e.value.line == 6
    f3 = tmp_path / "long.txt"
    f3.write_text(f.read_text() + "0.5\n")
    with pytest.raises(InputError, match=f"has {len(sids) + 1} scores for {len(sids)} n-best lines"):
        NbestCorpus.from_nbest([nbest], refs, metric=f"ext:{f3}")


@pytest.mark.parametrize("text,message", [("nan\n", "not a finite number"), ("1 2 3\n", "expected a score"),
                                          ("x\n", "expected a score")])
def test_external_scores_refuse_bad_lines(tmp_path, text, message):
    f = tmp_path / "s.txt"
    f.write_text("0.5\n" + text)
    with pytest.raises(InputError, match=message) as e:
        ExternalScores(str(f))
    assert e.value.line == 2


# ---------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("metric", ["chrf", "chrf++", "bleu:0.5,chrf++:0.5", "ter", "per", "wer", "cder", "moses-ter",
                                    "ter-bleu", "bleu-ter", "bleu:0.6,moses-ter:0.4"])
@pytest.mark.parametrize("name", ["mert", "pro", "apro", "mira", "kbmira", "rampion"])
def test_every_optimizer_tunes_to_other_metrics(name, metric, example_data, tmp_path, capsys):
    d = example_data
    args = ["optimize", name, "-q", "--nbest", str(d / "run1.best100.out.gz"), "--ref", str(d / "ref.0"),
            "--init", str(d / "run1.init.opt"), "--out", str(tmp_path / "w.opt"), "--seed", "2",
            "--metric", metric] + (["--restarts", "2"] if name == "mert" else [])
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["optimize", "none", "-q", "--nbest", str(d / "run1.best100.out.gz"), "--ref", str(d / "ref.0"),
                 "--init", str(d / "run1.init.opt"), "--out", str(tmp_path / "n.opt"), "--metric", metric]) == 0
    start = json.loads(capsys.readouterr().out)
    parsed = parse_metric(metric)
    assert first["metric"] == parsed.name
    # the score on 0-100, TER etc. as error rates: better by a point or more
    better = first["score"] - start["score"] if parsed.higher_is_better else start["score"] - first["score"]
    assert better > 1 and -100 <= first["score"] <= 100


def test_metric_that_cannot_take_effect_is_an_error(example_data, tmp_path, capsys):
    d = example_data
    store = str(tmp_path / "s.npz")
    assert main(["extract", "-q", "--nbest", str(d / "run1.best100.out.gz"), "--ref", str(d / "ref.0"),
                 "--store", store]) == 0
    rc = main(["optimize", "mert", "-q", "--store", store, "--init", str(d / "run1.init.opt"),
               "--out", str(tmp_path / "w"), "--metric", "chrf"])
    assert rc == EXIT_INPUT_ERROR
    err = capsys.readouterr().err
    assert "holds bleu statistics, so --metric chrf cannot take effect" in err and "Traceback" not in err
    assert main(["optimize", "mert", "-q", "--nbest", str(d / "run1.best100.out.gz"), "--ref", str(d / "ref.0"),
                 "--init", str(d / "run1.init.opt"), "--out", str(tmp_path / "w"), "--metric", "chrf",
                 "--directions", "expbleu"]) == EXIT_INPUT_ERROR
    assert "expected-BLEU directions need a store of BLEU statistics, not chrf" in capsys.readouterr().err


def test_score_equals_sacrebleu_ter_and_prints_error_rates(write, capsys):
    import sacrebleu

    hyps = ["The cat sat on the mat", "a dog barked loudly today", ""]
    refs = ["the mat the cat sat on", "the dog barked loudly", "nothing here"]
    hyp, ref = write("hyp", "\n".join(hyps) + "\n"), write("ref", "\n".join(refs) + "\n")
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "ter", "wer", "per", "cder", "--json"]) == 0
    lines = {x["name"]: x for x in map(json.loads, capsys.readouterr().out.splitlines())}
    assert lines["TER"]["score"] == pytest.approx(sacrebleu.TER().corpus_score(hyps, [refs]).score, abs=1e-9)
    assert set(lines) == {"TER", "WER", "PER", "CDER"}
    assert lines["WER"]["score"] >= lines["CDER"]["score"]     # CDER's block moves can only shorten the path


def test_score_prints_each_metric_and_an_interpolation(write, capsys):
    import sacrebleu

    hyps = ["the cat sat on the mat", "a dog barked loudly today"]
    refs = ["the cat sat on a mat", "the dog barked loudly"]
    hyp, ref = write("hyp", "\n".join(hyps) + "\n"), write("ref", "\n".join(refs) + "\n")
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "bleu", "chrf", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["name"] for x in lines] == ["BLEU", "chrF"]
    chrf = sacrebleu.CHRF().corpus_score(hyps, [refs]).score
    assert lines[1]["score"] == pytest.approx(chrf, abs=1e-9)
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "bleu:0.25,chrf:0.75", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    bleu = sacrebleu.BLEU(tokenize="none").corpus_score(hyps, [refs]).score
    assert [x["name"] for x in lines] == ["bleu:0.25,chrf:0.75"]    # one value, one line: the interpolation
    assert lines[0]["score"] == pytest.approx(0.25 * bleu + 0.75 * chrf, abs=1e-9)
