"""mtplug dtrain's persistent decoder with the real cdec (MTPLUG_CDEC_DIR): the same k-best
lists as the per-call path for the same weights, a dtrain run that ends with the per-call
run's weights on the toy system, and a decoder that cannot start reported in one line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from mtplug._ext._nbest_scan import Vocabulary
from mtplug.corpus import FeatureSpace
from mtplug.dtrain.decoder import CdecCalls
from mtplug.dtrain.persistent import PersistentCdec

NAMES = ["Glue", "WordPenalty", "LanguageModel", "LanguageModel_OOV", "PassThrough", "PhraseModel_0",
         "PhraseModel_1", "PhraseModel_2", "PhraseModel_3"]


def as_set(kb, space) -> list:
    """A k-best list as sorted (hypothesis, its nonzero features by name) pairs, with its stats."""
    names = [space.names.word(i) for i in range(len(space.names))]
    rows = []
    for i in range(kb.k):
        a, b = kb.indptr[i], kb.indptr[i + 1]
        feats = tuple(sorted((names[j], v) for j, v in zip(kb.ids[a:b].tolist(), kb.values[a:b].tolist()) if v))
        rows.append((kb.texts[i], feats, tuple(kb.stats[i].tolist())))
    return sorted(rows)


def test_the_persistent_decoder_gives_the_per_call_kbest(cdec_dir, cdec_toy):
    """Sentence after sentence with weights that jump (signs flip: weights-only lines are
    needed), the persistent process's k-best lists equal the per-call ones as sets: the same
    hypotheses with the same feature values and BLEU statistics."""
    src = cdec_toy.dev_src.read_text().splitlines()[:12]
    ref = cdec_toy.dev_ref.read_text().splitlines()[:12]
    rng = np.random.default_rng(5)
    cdec = str(cdec_dir / "decoder" / "cdec")
    persistent = PersistentCdec(cdec, str(cdec_toy.config), 20, timeout=300)
    per_call = CdecCalls(cdec, str(cdec_toy.config), 20, timeout=300)
    try:
        for s, r in zip(src, ref):
            w = rng.normal(0, 1, len(NAMES))
            got = []
            for dec in (persistent, per_call):
                words, space = Vocabulary(), FeatureSpace()
                for n in NAMES:
                    space.names.add(n.encode())
                kb = dec.decode([s], [r], NAMES, w, words, space)[0]
                assert kb.k > 0
                got.append(as_set(kb, space))
            assert got[0] == got[1]
        assert persistent.starts == 1 and persistent.weight_lines > 0 and persistent.fallbacks == 0
    finally:
        persistent.close()
        per_call.close()


def test_dtrain_persistent_ends_with_the_per_call_weights(cdec_dir, cdec_toy, tmp_path):
    """On the toy system (k = 20, 2 epochs) both decoder processes give byte-identical
    weights; one cdec process decodes the whole run. (Not a guarantee in general: equal
    model scores may come in another order from a persistent cdec, docs/dtrain.md.)"""
    ini = tmp_path / "dtrain.ini"
    ini.write_text(f"input={cdec_toy.dev_src}\nrefs={cdec_toy.dev_ref}\ndecoder_config={cdec_toy.config}\n"
                   f"input_weights={cdec_toy.weights}\nk=20\nepochs=2\nscorer=fixed_stupid_bleu\n"
                   "learning_rate=0.1\nloss_margin=1\ngamma=0.001\nselect_weights=avg\n")
    outs, summaries = {}, {}
    for mode in ("per_call", "persistent"):
        out = tmp_path / f"w.{mode}"
        p = subprocess.run([sys.executable, "-m", "mtplug", "dtrain", "-c", str(ini), "--decoder-bin",
                            str(cdec_dir / "decoder" / "cdec"), "--decoder-process", mode, "-o", str(out)],
                           capture_output=True, text=True, timeout=900, check=False)
        assert p.returncode == 0, p.stderr[-3000:]
        outs[mode], summaries[mode] = out.read_bytes(), json.loads(p.stdout)
    assert outs["persistent"] == outs["per_call"]
    assert summaries["persistent"]["decoder_starts"] == 1
    assert summaries["per_call"]["decoder_starts"] == summaries["per_call"]["decoder_calls"] == 60


def test_a_decoder_that_cannot_start_is_one_line(cdec_dir, cdec_toy, tmp_path):
    bad = tmp_path / "cdec.ini"
    bad.write_text(cdec_toy.config.read_text() + "feature_function=NoSuchFeature\n")
    p = subprocess.run([sys.executable, "-m", "mtplug", "dtrain", "-q", "--input", str(cdec_toy.dev_src), "--ref",
                        str(cdec_toy.dev_ref), "--decoder-config", str(bad), "--weights", str(cdec_toy.weights),
                        "--decoder-bin", str(cdec_dir / "decoder" / "cdec"), "--epochs", "1", "-o",
                        str(tmp_path / "w")], capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr
    assert lines[0].startswith("mtplug: error: the decoder ") and " on shard 0 after 0 sentences: " in lines[0]
    assert "--mr_mira_compat" in lines[0]
