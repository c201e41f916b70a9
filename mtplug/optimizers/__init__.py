"""The tuning algorithms: MERT, PRO, APRO, online and batch MIRA, RAMPION, and ``none``.

Each is an :class:`~mtplug.optimizers.base.Optimizer` subclass whose docstring lists its
options; :mod:`~mtplug.optimizers.registry` is the one table of them by name
(:func:`~mtplug.optimizers.registry.get_optimizer`). An optimizer takes a corpus (an
:class:`mtplug.corpus.NbestCorpus`, forests, or a partitioned pool) and start weights and
returns a :class:`~mtplug.optimizers.base.Result`.
"""
