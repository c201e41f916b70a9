"""Programs and wrappers that put mtplug behind other tools' interfaces.

``moses``: drop-in replacements for the programs Moses's ``mert-moses.pl`` runs from
``--mertdir`` (extractor, mert, kbmira, pro, megam_i686.opt, evaluator, sentence-bleu).
"""
