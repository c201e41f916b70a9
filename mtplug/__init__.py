"""mtplug: tune the feature weights of SMT systems; a drop-in for Moses and cdec tuning tools.

The Python API (:mod:`mtplug.api`) is here at the top level: ``mtplug.load_nbest``,
``mtplug.optimize``, ``mtplug.score``, ``mtplug.rerank``, ``mtplug.tune`` and the objects
they take and return. It is imported on first use, so that the Moses programs and the
command line, which import submodules, do not pay for it.
"""

from ._version import __version__

__all__ = ["OPTIMIZER_NAMES", "InputError", "NbestCorpus", "References", "Result", "Weights", "__version__",
           "get_optimizer", "load_mert_data", "load_nbest", "load_plain", "load_store", "optimize", "read_devset",
           "read_references", "read_weights", "rerank", "score", "tune", "write_weights"]


def __getattr__(name: str):
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'mtplug' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
