"""cdec dtrain (Simianer, Riezler & Dyer 2012) with the decoder in the loop.

Online pairwise-ranking training: for every sentence the cdec decoder produces a
k-best list under the current weights, dtrain scores it with a per-sentence BLEU,
samples pairs (XYX, all, PRO) and applies a perceptron / SVM-style update with ℓ1
regularisation; several shards run in parallel and are mixed after every epoch with
the feature selection of dtrain's lplp.rb. Modules, one job each:

``config``      dtrain.ini keys and defaults, parsing, validation
``pairs``       pair sampling
``update``      the per-sentence update (perceptron/SVM, margin, gamma, pclr, batch, repeat)
``l1``          ℓ1 regularisation (naive, clip, cumul)
``scorers``     dtrain's per-sentence scorers
``kbest``       a k-best list as arrays
``decoder``     running the cdec program for k-best lists, a process per call
``persistent``  one cdec process per shard for the run, weight changes in its input markup
``mixing``      sharding and parameter mixing (parallelize.rb, lplp.rb)
``trainer``     the epoch loop, select_weights
``weights_io``  dtrain weight files
``command``     the ``mtplug dtrain`` command
"""

from .config import DtrainConfig, load_config
from .trainer import DtrainResult, run_dtrain

__all__ = ["DtrainConfig", "DtrainResult", "load_config", "run_dtrain"]
