"""Fuzzing every reader: mutated valid inputs must be read or refused with InputError.

Shared by the bounded hypothesis test (tests/reliability/test_fuzz_readers.py) and the
long run (benchmarks/fuzz_readers.py, ≥ 100,000 inputs per reader). A reader passes an
input when it returns, or raises :class:`mtplug.errors.InputError` naming the file;
any other exception (IndexError, UnicodeDecodeError, a crash in a kernel, ...) is a bug.
"""

from __future__ import annotations

import gzip
import os
import random
from typing import Callable

from mtplug.errors import InputError

#: (reader name, a valid sample, the function that reads a file of it)
SAMPLES: dict[str, bytes] = {
    "moses-nbest": (b"0 ||| a b c ||| LM0= -1.5 TM0= 1 2 WT_a~b= 1 ||| -1\n"
                    b"0 ||| a c ||| LM0= -2.5 TM0= 1 0 ||| -2\n1 ||| x y ||| LM0= -2 TM0= 0.5 1 ||| -2\n"),
    "cdec-kbest": b"0 ||| a b c ||| LM=-1.5 TM_0=1 ||| -1\n0 ||| a c ||| LM=-2 ||| -2\n1 ||| x y ||| TM_0=2 ||| 1\n",
    "fairseq-nbest": (b"2024-05-01 | INFO | fairseq_cli.generate | loading\nS-1\tx y\nH-1\t-0.5\tx y\nD-1\t-0.5\tx y\n"
                      b"P-1\t-0.25 -0.25 -0.1\nS-0\ta b\nH-0\t-0.2\ta b c\nD-0\t-0.2\ta b c\nP-0\t-0.1 -0.1 0 -0.1\n"
                      b"H-0\t-0.9\ta c\nD-0\t-0.9\ta c\nP-0\t-0.5 -0.3 -0.1\nGenerate test with beam=2: BLEU4 = 40.00\n"),
    "marian-nbest": (b"0 ||| a b c ||| 0-0 1-1 2-2 ||| WordScores= -0.1 -0.2 -0.3 -0.1 ||| F0= -0.7 ||| -0.175\n"
                     b"0 ||| a c ||| 0-0 1-2 ||| WordScores= -0.5 -0.2 -0.3 ||| F0= -1 ||| -0.33\n"
                     b"1 ||| x y ||| 0-0 1-1 ||| WordScores= -0.1 -0.2 -0.1 ||| F0= -0.4 ||| -0.13\n"),
    "jsonl-nbest": (b'{"id": 1, "hyp": "x y", "features": {"nmt": -0.5, "LM": -3}, "score": -1}\n'
                    b'{"id": 0, "hyp": "a b c", "features": {"nmt": -0.2, "LM": -4.5}}\n'
                    b'{"id": 0, "hyp": "a c", "features": {"nmt": -0.9, "LM": -3.25}}\n'),
    "feature-values": b"0 0 -1.5\n0\t1\t2\n1 0 0.25\n",
    "join-nbest": (b"0 ||| a b c ||| LM0= -1.5 TM0= 1 2 WT_a~b= 1 ||| -1\n"
                   b"0 ||| a c ||| LM0= -2.5 TM0= 1 0 ||| -2\n1 ||| x y ||| LM0= -2 TM0= 0.5 1 ||| -2\n"),
    "references": b"a b c\nx y z\n",
    # gold edits of the two sentences the "references" sample's lines (the hypotheses) correct
    "m2": (b"S a q c\nA 1 2|||Vform|||b|||REQUIRED|||-NONE-|||0\nA 1 1|||Det|||the|||REQUIRED|||-NONE-|||1\n\n"
           b"S x y\nA -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0\nA 2 2|||Det|||z|||REQUIRED|||-NONE-|||2\n\n"),
    "features.dat": (b"FEATURES_TXT_BEGIN_0 0 2 3 LM0_0 TM0_0 TM0_1\n-1.5 1 2 WT_a~b=1\n-2.5 1 0\n"
                     b"FEATURES_TXT_END_0\nFEATURES_TXT_BEGIN_0 1 1 3 LM0_0 TM0_0 TM0_1\n-2 0.5 1\n"
                     b"FEATURES_TXT_END_0\n"),
    "scores.dat": (b"SCORES_TXT_BEGIN_0 0 2 9 BLEU\n3 3 2 2 1 1 0 0 3\n2 2 1 1 0 0 0 0 3\nSCORES_TXT_END_0\n"
                   b"SCORES_TXT_BEGIN_0 1 1 9 BLEU\n2 2 1 1 0 0 0 0 3\nSCORES_TXT_END_0\n"),
    "moses.ini": b"# c\n[input-factors]\n0\n\n[weight]\nLM0= 0.5 # lm\nTM0= 0.2 0.3\nWT_a~b= 1\n",
    "weights": b"LM0_0 0.5\nTM0_0 0.2\nTM0_1 -1e-3\n",
    "cdec-weights": b"# cdec\nLanguageModel 0.5\nPhraseModel_0\t0.25\nWordPenalty=-1\n",
    "init.opt": b"0.5 0.2 0.2\n0 0 0\n1 1 1\n",
    "pro.data": b"1 F0 0.5 F2 -1 WT_a~b 1\n0 F0 -0.5 F2 1 WT_a~b -1\n",
    "dtrain.ini": b"# dtrain\ninput=in.txt\nrefs=refs.txt\ndecoder_config=cdec.ini\nk=10\nN=4\nepochs=2\nlearning_rate=0.0001\npair_sampling=XYX\nfilter=uniq\n",
    "tune.yaml": b"decoder: moses\nnbest: 10\nref: [a, b]\noptimizer_options: {restarts: 2}\n",
    "moses-searchgraph": (b"0 hyp=0 stack=0 forward=1 fscore=-2\n"
                          b'0 hyp=1 stack=1 back=0 score=-1 transition=-1 forward=2 fscore=-1 covered=0-0 '
                          b'scores="core=(-1,0.5) WT_a~b=1" out="x|the"\n'
                          b'0 hyp=2 stack=2 back=1 score=-2 transition=-1 forward=-1 fscore=0 covered=1-1 '
                          b'scores="core=(-2,0) " out="y z|a b"\n'
                          b'0 hyp=3 stack=2 back=1 score=-3 transition=-2 recombined=2 forward=-1 fscore=0 '
                          b'covered=1-1 scores="core=(-3,1) " out="y z|"\n1 hyp=0 stack=0 forward=-1 fscore=0\n'),
    "moses-hypergraph": (b"# target ||| features ||| source-covered\n3 3\n# node 0\n1\n<s> |||  ||| 0\n# node 1\n1\n"
                         b"[0] the house  ||| LM0=-1.500000 TM0_1=-0.5 WT_a~b=1  ||| 1\n# node 2\n1\n"
                         b"[1] </s> |||  ||| 1\n"),
    "plf": (b"((('A',0.5,1),('C',0.25,1),('AB',0.125,2),),(('B',2,1),),)\n"
            b"((('A',0.5,1),('D\\'',{'LatticeCost_0':0.1, 'UsesDPrime':1.0,},1),('*EPS*', 1)),)\n"),
    "cdec-json": (b'{"rules":[1,"[X] ||| a ||| b",2,"[S] ||| [X,1] c ||| [1] d"],"features":["LM","TM"],'
                  b'"edges":[{"tail":[],"spans":[0,1,-1,-1],"feats":[0,-1.5,1,2],"rule":1}],'
                  b'"node":{"in_edges":[0],"cat":"X"},"edges":[{"tail":[0],"feats":[0,0.5,"Glue",1],"rule":2},'
                  b'{"tail":[0],"feats":[1,1e-3],"rule":"[S] ||| [X,1] ||| [1] e"}],'
                  b'"node":{"in_edges":[1,2],"cat":"S"}}\n'),
    # cdec -O forest: test-ch-inside.bin.gz of cdec's dpmert test data, decompressed (6 nodes, 8 edges)
    "cdec-forest": bytes.fromhex(
        "160000000000000073657269616c697a6174696f6e3a3a617263686976650a00040804080100000000000000000600000008000000000000"
        "0000000000000000000000000000010000000000000058010000000000000000000000010000000000000001000000000000000000000001"
        "0000000100000000000000580100000000000000010000000200000000000000040000000500000000000000000000000200000001000000"
        "0000000058010000000000000002000000010000000000000003000000000000000000000003000000010000000000000058010000000000"
        "0000030000000200000000000000040000000500000000000000000000000400000001000000000000005802000000000000000400000005"
        "0000000200000000000000060000000700000000000000000000000500000001000000000000005802000000000000000600000007000000"
        "0000000000000000000000000000000000000000000000000001000000060001000000000000000001000000000000005801000000000000"
        "00000000000100000000000000610100000000000000000000000100000000000000610000000000000000000000000000a051ff7fa051ff"
        "7f00000000010000000100000000000600010000000100000000000000580200000002000000000000000100000000000000410100000000"
        "00000058020000000200000000000000010000000000000041000000000100000000020000000000000000020000000000000066319a9999"
        "999999e9bf020000000000000066329a9999999999b9bfa051ff7fa051ff7f01000000020000000000060002000000010000000000000058"
        "0100000000000000000000000100000000000000630100000000000000000000000100000000000000630000000000010000000200000000"
        "0000006632000000000000f0bfa051ff7fa051ff7f0200000003000000010002000000060003000000010000000000000058020000000200"
        "0000000000000100000000000000430100000000000000580200000002000000000000000100000000000000430000000001000000000200"
        "0000020000000000000066319a9999999999c9bf020000000000000066329a9999999999b9bfa051ff7fa051ff7f03000000040000000200"
        "0100000003000000060004000000010000000000000058030000000500000000000000010000000000000058010000000000000042010000"
        "00000000005803000000050000000000000000000000010000000000000042ffffffff020000000002000000020000000000000066313333"
        "33333333f3bf020000000000000066329a9999999999c9bfa051ff7fa051ff7f040000000400000002000100000003000000060005000000"
        "0100000000000000580300000005000000000000000100000000000000580100000000000000620100000000000000580300000005000000"
        "0000000000000000010000000000000062ffffffff02000000000200000002000000000000006631000000000000e0bf0200000000000000"
        "6632cdccccccccccf4bfa051ff7fa051ff7f0500000005000000010004000000060006000000010000000000000058020000000200000000"
        "0000000100000000000000580100000000000000580200000002000000000000000100000000000000580000000001000000000200000002"
        "000000000000006631000000000000e0bf020000000000000066329a9999999999e9bfa051ff7fa051ff7f06000000050000000100040000"
        "0006000700000001000000000000005802000000020000000000000001000000000000005a01000000000000005802000000020000000000"
        "000001000000000000005a0000000001000000000200000002000000000000006631666666666666e6bf02000000000000006632cdcccccc"
        "ccccecbfa051ff7fa051ff7f07000000e000000000000000"),
}

_TOKENS = [b"|||", b" ||| ", b"\n", b"\r\n", b"=", b" ", b"\t", b"nan", b"inf", b"-inf", b"1e999", b"\xff",
           b"\xc3", b"\x00", b"[weight]", b"#", b"_", b"-", b"0", b"99999999999999999999", b"FEATURES_TXT_END_0",
           b"SCORES_TXT_BEGIN_0 0 1 9 BLEU\n", b"<seg id=\"3\">", b"F", b":", b"[", b"]", b"{", b"}",
           b"\nH-0\t", b"\nD-1\t", b"\nP-0\t", b'"id"', b"NaN", b"0-0 ", b"\nA ", b"\nS ", b"noop", b"|||0"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four random edits: flip, delete, duplicate, insert a token, truncate, gzip (whole or cut)."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif op == 1:
            del data[pos:pos + rng.randint(1, 8)]
        elif op == 2:
            end = min(len(data), pos + rng.randint(1, 40))
            data[pos:pos] = data[pos:end]
        elif op == 3:
            data[pos:pos] = rng.choice(_TOKENS)
        elif op == 4:
            del data[pos:]
        elif op == 5:
            z = gzip.compress(bytes(data), mtime=0)
            data = bytearray(z if rng.random() < 0.5 else z[: rng.randrange(len(z) + 1)])
        else:
            data[pos:pos] = data[:rng.randint(0, len(data))]  # repeat a prefix (ids out of order)
    return bytes(data)


def _readers(d: str) -> dict[str, Callable[[str], object]]:
    from mtplug.corpus import NbestCorpus
    from mtplug.dtrain.config import load_config
    from mtplug.formats.cdec_forest import read_cdec_forest
    from mtplug.formats.cdec_json import read_cdec_json
    from mtplug.formats.cdec_weights import read_cdec_weights
    from mtplug.formats.mert_data import read_mert_data
    from mtplug.formats.mert_weights import read_init_opt
    from mtplug.formats.moses_ini import read_moses_ini
    from mtplug.formats.moses_hypergraph import read_moses_hypergraph
    from mtplug.formats.moses_searchgraph import read_search_graph
    from mtplug.formats.plf import read_plf
    from mtplug.formats.pro_data import read_pro_data
    from mtplug.formats.references import read_references
    from mtplug.formats.weights import read_weights
    from mtplug.join_features import join_features
    from mtplug.metrics.references import metric_references
    from mtplug.tuning.config import read_yaml

    def good(name: str) -> str:
        path = os.path.join(d, "good." + name)
        if not os.path.exists(path):
            with open(path, "wb") as fh:
                fh.write(SAMPLES[name])
        return path

    return {
        "moses-nbest": lambda p: NbestCorpus.from_nbest([p], read_references([good("references")])),
        "cdec-kbest": lambda p: NbestCorpus.from_nbest([p], read_references([good("references")])),
        "fairseq-nbest": lambda p: NbestCorpus.from_nbest([p], read_references([good("references")]),
                                                          nbest_format="fairseq"),
        "marian-nbest": lambda p: NbestCorpus.from_nbest([p], read_references([good("references")]),
                                                         nbest_format="marian"),
        "jsonl-nbest": lambda p: NbestCorpus.from_nbest([p], read_references([good("references")]),
                                                        nbest_format="jsonl"),
        "feature-values": lambda p: join_features(good("moses-nbest"), [("X", p)], os.devnull),
        "join-nbest": lambda p: join_features(p, [("X", good("feature-values"))], os.devnull),
        "references": lambda p: NbestCorpus.from_nbest([good("moses-nbest")], read_references([p])),
        "m2": lambda p: NbestCorpus.from_plain(good("references"), metric_references([p], "m2"), metric="m2"),
        "features.dat": lambda p: read_mert_data([p], [good("scores.dat")]),
        "scores.dat": lambda p: read_mert_data([good("features.dat")], [p]),
        "moses.ini": read_moses_ini,
        "weights": lambda p: read_weights(p, feature_names=["LM0_0", "TM0_0", "TM0_1"]),
        "cdec-weights": read_cdec_weights,
        "init.opt": read_init_opt,
        "pro.data": read_pro_data,
        "dtrain.ini": load_config,
        "tune.yaml": read_yaml,
        "moses-searchgraph": read_search_graph,
        "moses-hypergraph": read_moses_hypergraph,
        "plf": read_plf,
        "cdec-json": read_cdec_json,
        "cdec-forest": read_cdec_forest,
    }


class Fuzzer:
    """Reads mutated inputs in directory ``d``; :meth:`check` raises AssertionError on a bug."""

    def __init__(self, d: str):
        self.d = d
        self.readers = _readers(d)

    def check(self, reader: str, data: bytes) -> str:
        """'read' or 'refused'; AssertionError (with the input) when something else escapes."""
        path = os.path.join(self.d, f"fuzz.{reader}")
        with open(path, "wb") as fh:
            fh.write(data)
        try:
            self.readers[reader](path)
        except InputError as err:
            # the file at fault: this one, or the good one it disagrees with (references too short)
            if err.path is None or not os.path.abspath(err.path).startswith(self.d):
                raise AssertionError(f"{reader}: InputError without the file name: {err} (input {data!r})")
            return "refused"
        except Exception as err:  # noqa: BLE001 - the point of the fuzzer
            raise AssertionError(f"{reader}: {type(err).__name__}: {err} (input {data!r})") from err
        return "read"
