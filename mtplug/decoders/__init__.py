"""Decoder adapters: one module per decoder, each a :class:`Decoder` subclass.

An adapter knows four things only: how to read the start weights, which files the
decoder needs for given weights, the command line that decodes one shard into an
n-best file, and how the decoder numbers the shard's sentences. The loop
(``mtplug.tuning.loop``) does everything else, so the real programs and the stand-in
(``mtplug.tuning.standin``) drop in alike.
"""

from __future__ import annotations

from .base import Decoder


def get_decoder(cfg) -> Decoder:
    """The adapter of ``cfg.decoder`` (``moses`` or ``cdec``), built from the tune config ``cfg``."""
    if cfg.decoder == "moses":
        from .moses import MosesDecoder
        return MosesDecoder(cfg)
    if cfg.decoder == "cdec":
        from .cdec import CdecDecoder
        return CdecDecoder(cfg)
    raise ValueError(f"unknown decoder {cfg.decoder!r}; known: moses, cdec")
