"""dtrain.ini parsing, defaults, command-line overrides and errors."""

from __future__ import annotations

import math

import pytest

from mtplug.dtrain.config import DTRAIN_KEYS, KEYS, DtrainConfig, load_config, read_ini
from mtplug.errors import InputError

# training/dtrain/examples/standard/dtrain.ini of cdec (2014), its comments and spacing kept
CDEC_STANDARD_INI = """\
#input=./nc-wmt11.de.gz
#refs=./nc-wmt11.en.gz
bitext=./nc-wmt11.gz
output=-                  # a weights file (add .gz for gzip compression) or STDOUT '-'
select_weights=VOID       # output average (over epochs) weight vector
decoder_config=./cdec.ini # config for cdec
# weights for these features will be printed on each iteration
print_weights=Glue WordPenalty LanguageModel LanguageModel_OOV PhraseModel_0 PhraseModel_1 PassThrough
stop_after=10 # stop epoch after 10 inputs

# interesting stuff
epochs=3                 # run over input 3 times
k=100                    # use 100best lists
N=4                      # optimize (approx) BLEU4
scorer=fixed_stupid_bleu # use 'stupid' BLEU+1
learning_rate=1.0        # learning rate, don't care if gamma=0 (perceptron) and loss_margin=0
gamma=0                  # use SVM reg
sample_from=kbest        # use kbest lists (as opposed to forest)
filter=uniq              # only unique entries in kbest (surface form)
pair_sampling=XYX        #
hi_lo=0.1                # 10 vs 80 vs 10 and 80 vs 10 here
pair_threshold=0         # minimum distance in BLEU (here: > 0)
loss_margin=0            # update if correctly ranked, but within this margin
"""


def test_every_cdec_md_key_has_its_default():
    cfg = DtrainConfig()
    expected = {
        "output": "-", "stop_after": 0, "keep": False, "epochs": 10, "k": 100, "sample_from": "kbest",
        "filter": "uniq", "pair_sampling": "XYX", "hi_lo": 0.1, "pair_threshold": 0.0, "N": 4,
        "scorer": "stupid_bleu", "approx_bleu_d": 0.9, "learning_rate": 1.0, "gamma": 0.0, "loss_margin": 0.0,
        "scale_bleu_diff": False, "max_pairs": 4294967295, "pclr": "no", "batch": False, "repeat": 1,
        "rescale": False, "l1_reg": "none", "l1_reg_strength": None, "select_weights": "last", "check": False,
        "noup": False, "input": None, "refs": None, "bitext": None, "input_weights": None,
        "decoder_config": None, "print_weights": "",
    }
    for key, value in expected.items():
        assert getattr(cfg, key) == value, key
    assert set(expected) <= set(DTRAIN_KEYS)
    assert cfg.faster_perceptron


def test_cdec_example_ini(write):
    cfg = load_config(write("dtrain.ini", CDEC_STANDARD_INI))
    assert cfg.bitext == "./nc-wmt11.gz" and cfg.output == "-" and cfg.select_weights == "VOID"
    assert cfg.print_weight_names[:2] == ["Glue", "WordPenalty"] and len(cfg.print_weight_names) == 7
    assert (cfg.stop_after, cfg.epochs, cfg.scorer, cfg.hi_lo) == (10, 3, "fixed_stupid_bleu", 0.1)


def test_flags_and_overrides(write):
    path = write("d.ini", "bitext=b\ndecoder_config=c\nkeep\nbatch=false\nrescale = yes\nepochs = 3\n")
    raw = read_ini(path)
    assert raw["keep"][0] is True and raw["batch"][0] is False and raw["rescale"][0] is True
    cfg = load_config(path, {"epochs": "2", "keep": "0", "gamma": None, "loss_margin": "10000"})
    assert cfg.epochs == 2 and cfg.keep is False and cfg.gamma == 0.0
    assert cfg.margin == math.inf and not cfg.faster_perceptron
    assert load_config(None, {"bitext": "b", "decoder_config": "c", "check": True}).effective_repeat == 2


@pytest.mark.parametrize("text, message, line", [
    ("bitext=b\ndecoder_config=c\nlearnin_rate=1\n", "unknown dtrain key 'learnin_rate'", 3),
    ("bitext=b\nk=10\ndecoder_config=c\nk=20\n", "k is given twice (first on line 2)", 4),
    ("bitext=b\ndecoder_config=c\n\nk=ten\n", "k: expected a non-negative integer, got 'ten'", 4),
    ("bitext=b\ndecoder_config=c\ngamma=x\n", "gamma: expected a number, got 'x'", 3),
    ("bitext=b\ndecoder_config=c\nkeep=maybe\n", "keep: expected a flag", 3),
    ("bitext=b\ndecoder_config=c\npair_sampling=xyx\n", "'xyx' is not one of XYX, XYX-full, all, PRO", 3),
    ("bitext=b\ndecoder_config=c\npair_sampling=all\nhi_lo=0.2\n", "hi_lo: has no effect with pair_sampling=all", 4),
    ("bitext=b\ndecoder_config=c\npair_sampling=PRO\nmax_pairs=9\n", "max_pairs: has no effect with pair_sampling=PRO",
     4),
    ("bitext=b\ndecoder_config=c\nk\n", "k: needs a value", 3),
    ("bitext=b\ndecoder_config=c\nhi_lo=0.7\n", "hi_lo: must lie in [0.01, 0.5]", 3),
    ("bitext=b\ndecoder_config=c\nl1_reg=clip\n", "needs l1_reg_strength", 3),
    ("bitext=b\ndecoder_config=c\nsample_from=forest\n", "'forest' needs the decoder's hypergraph", 3),
    ("bitext=b\ndecoder_config=c\nN=5\n", "N must be 1..4", 3),
    ("bitext=b\ndecoder_config=c\nlplp_args=l3 select_k 10\n", "lplp_args: expected", 3),
    ("bitext=b\ndecoder_config=c\ninput=x\n", "'bitext', not both", 1),
    ("[dtrain]\n", "sections are not dtrain keys", 1),
])
def test_errors_name_the_file_and_line(write, text, message, line):
    path = write("bad.ini", text)
    with pytest.raises(InputError) as err:
        load_config(path)
    assert message in str(err.value)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_missing_required_settings_and_flag_errors(write):
    with pytest.raises(InputError, match=r"a\.ini: decoder_config is required \(the cdec\.ini of the decoder; or give "
                                         r"--decoder-config\)$"):
        load_config(write("a.ini", "bitext=b\n"))
    # without a dtrain.ini, by their flags (issue 47)
    with pytest.raises(InputError, match=r"^--decoder-config is required \(the cdec\.ini of the decoder\)$"):
        load_config(None, {"bitext": "b"})
    with pytest.raises(InputError, match=r"^--ref: give --input and --ref, or --bitext$"):
        load_config(None, {"decoder_config": "c", "input": "x"})
    with pytest.raises(InputError, match="give 'input' and 'refs', or 'bitext'"):
        load_config(write("b.ini", "decoder_config=c\ninput=x\n"))
    with pytest.raises(InputError, match=r"^--epochs: expected a non-negative integer"):
        load_config(write("c.ini", "bitext=b\ndecoder_config=c\n"), {"epochs": "two"})
    with pytest.raises(InputError, match="no such file"):
        load_config("/nonexistent/dtrain.ini")


def test_keys_table_is_complete():
    for name, f in KEYS.items():
        assert f.metadata["help"] and f.metadata["kind"] in ("str", "int", "float", "bool"), name
