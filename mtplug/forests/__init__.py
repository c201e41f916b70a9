"""Algorithms over Hypergraphs: k-best, envelopes, hope/fear."""
