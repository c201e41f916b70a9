"""Readers and writers of the files of Moses, cdec and mtplug; nothing here tunes or scores.

N-best/k-best lists (:mod:`~mtplug.formats.nbest`), Moses's features.dat/scores.dat
(:mod:`~mtplug.formats.mert_data`) and pro.data (:mod:`~mtplug.formats.pro_data`),
references (:mod:`~mtplug.formats.references`), weights in every format
(:mod:`~mtplug.formats.weights` dispatches; :mod:`~mtplug.formats.weights_core` holds
:class:`~mtplug.formats.weights_core.Weights`), lattices and forests (PLF, cdec forests and
JSON hypergraphs, Moses hypergraphs and search graphs; :mod:`~mtplug.formats.forests` finds
and reads them), and the number text the tools write (:mod:`~mtplug.formats.number_text`).
Bad input raises :class:`mtplug.errors.InputError` naming the file and line.
"""
