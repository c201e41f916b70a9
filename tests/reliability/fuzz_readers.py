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
    "references": b"a b c\nx y z\n",
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
}

_TOKENS = [b"|||", b" ||| ", b"\n", b"\r\n", b"=", b" ", b"\t", b"nan", b"inf", b"-inf", b"1e999", b"\xff",
           b"\xc3", b"\x00", b"[weight]", b"#", b"_", b"-", b"0", b"99999999999999999999", b"FEATURES_TXT_END_0",
           b"SCORES_TXT_BEGIN_0 0 1 9 BLEU\n", b"<seg id=\"3\">", b"F", b":", b"[", b"]", b"{", b"}"]


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
    from mtplug.formats.cdec_weights import read_cdec_weights
    from mtplug.formats.mert_data import read_mert_data
    from mtplug.formats.mert_weights import read_init_opt
    from mtplug.formats.moses_ini import read_moses_ini
    from mtplug.formats.pro_data import read_pro_data
    from mtplug.formats.references import read_references
    from mtplug.formats.weights import read_weights
    from mtplug.tune.config import read_yaml

    def good(name: str) -> str:
        path = os.path.join(d, "good." + name)
        if not os.path.exists(path):
            with open(path, "wb") as fh:
                fh.write(SAMPLES[name])
        return path

    return {
        "moses-nbest": lambda p: NbestCorpus.from_nbest([p], read_references([good("references")])),
        "cdec-kbest": lambda p: NbestCorpus.from_nbest([p], read_references([good("references")])),
        "references": lambda p: NbestCorpus.from_nbest([good("moses-nbest")], read_references([p])),
        "features.dat": lambda p: read_mert_data([p], [good("scores.dat")]),
        "scores.dat": lambda p: read_mert_data([good("features.dat")], [p]),
        "moses.ini": read_moses_ini,
        "weights": lambda p: read_weights(p, feature_names=["LM0_0", "TM0_0", "TM0_1"]),
        "cdec-weights": read_cdec_weights,
        "init.opt": read_init_opt,
        "pro.data": read_pro_data,
        "dtrain.ini": load_config,
        "tune.yaml": read_yaml,
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
