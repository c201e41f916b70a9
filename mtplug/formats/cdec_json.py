"""cdec's JSON hypergraph (``-O DIR`` wrote ``DIR/<sent_id>.json.gz`` until 2014).

Layout (old cdec ``decoder/hg_io.cc`` HypergraphIO::WriteToJSON / ReadFromJSON), one
object whose keys repeat, in this order::

    {"rules":[1,"[X] ||| a ||| b",2,"[S] ||| [X,1] c ||| [1] d",...],   rule id, rule string, ...
     "features":["LM","TM",...],                                       feature index -> name
     "edges":[{"tail":[],"spans":[i,j,pi,pj],"feats":[0,-1.5,1,2],"rule":1},...],
     "node":{"in_edges":[0,...],"cat":"X"},
     "edges":[...],"node":{...}, ...}                                   nodes in topological order

Each ``"node"`` is the next node (ids 0, 1, ... in file order); its ``in_edges`` are
global edge numbers (edges are numbered in file order over all ``"edges"`` lists). An
edge's ``tail`` lists node ids, ``feats`` alternates a feature (an index into
``features`` or a name) and its value, ``rule`` is a rule id or a rule string. The goal
is the last node. A rule string is ``[LHS] ||| source ||| target [||| scores]`` or
``[LHS] ||| target``; on the target side ``[k]`` or ``[X,k]`` (k = 1..9) is the yield of
the edge's k-th tail, every other token a word.

Reading keeps what :class:`~mtplug.hypergraph.Hypergraph` holds: tails, the target side,
the edge features (a feature repeated in one edge: the last value wins, as in cdec).
Rule LHS, source side and rule scores, spans, node categories and ``is_sorted`` are
checked for shape and dropped; nodes the goal does not reach are dropped. Every feature
of ``features`` is kept in ``feature_names``, in file order. mtplug is stricter than
cdec (which asserts or aborts): an unknown key, a wrong type, a missing rule, an edge
outside every node or in two nodes, a tail that is not an earlier node and a non-finite
value are :class:`~mtplug.errors.InputError` (line given when the JSON itself is broken).

Writing follows WriteToJSON: one line, rules numbered from 1 in first use, all of
``feature_names`` as ``features``, ``spans`` of -1 (a Hypergraph has none), edge
features written with the shortest exact text (zeros included, unlike cdec, so a round
trip is exact). A Hypergraph has no rule LHS nor source side, so every rule is written
``[X] ||| <target with [X,k]> ||| <target with [k]>``: the target side doubles as source.
Words that would not read back as one target token (empty, with ASCII whitespace,
containing ``|||``, or shaped like ``[k]``) and references to a tail after the 9th are
refused (ValueError). The file is gzipped when its name ends in ``.gz``.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import zlib
from typing import NoReturn

from ..errors import InputError
from ..fileio import atomic_output, invalid_utf8, open_binary
from ..hypergraph import Hypergraph, HypergraphBuilder
from .number_text import format_shortest

# istream >> string splits on ASCII whitespace only
_TOKEN_SEP = re.compile(r"[ \t\n\r\x0b\x0c]+")
_ASCII_SPACE = re.compile(r"[ \t\n\r\x0b\x0c]")
_SEP = "|||"
# a JSON string (skipped) or one of the constants Python's json reads and cdec's does not
_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


class _Object(list):
    """A JSON object as its (key, value) pairs in file order (keys may repeat)."""


class _Bad(ValueError):
    """NaN or Infinity in the JSON (Python's json reads them; cdec's parser does not)."""


def _reject_constant(name: str):
    raise _Bad(f"{name} is not a number; expected a finite value")


def target_slot(token: str) -> int | None:
    """0-based tail index of a target-side ``[k]`` / ``[X,k]`` token (cdec's rule), else None."""
    n = len(token)
    if n > 2 and token[0] == "[" and token[-1] == "]" and "1" <= token[-2] <= "9" \
            and (n == 3 or (n > 4 and token[-3] == ",")):
        return ord(token[-2]) - ord("1")
    return None


def rule_target(rule: str) -> list | None:
    """The target side of a cdec rule string as builder rhs (words and 0-based tail slots).

    None if the string has no ``|||`` field separator.
    """
    tokens = [t for t in _TOKEN_SEP.split(rule) if t]
    seps = [i for i, t in enumerate(tokens) if t == _SEP]
    if not seps:
        return None
    start = seps[0] + 1 if len(seps) == 1 else seps[1] + 1
    end = seps[2] if len(seps) > 2 else len(tokens)
    out = []
    for t in tokens[start:end]:
        k = target_slot(t)
        out.append(t if k is None else k)
    return out


def show_value(x) -> str:
    """``repr(x)`` for an error message, cut to 60 characters (a bad value may be a whole array)."""
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class _Reader:
    """Reads the top-level keys in file order, as cdec's HGReader state machine does."""

    def __init__(self, source: str):
        self.path = source or None
        self.source = source
        self.features: list[str] = []
        self.features_seen = False
        self.rules: dict[int, list] = {}
        self.rule_cache: dict[str, list] = {}
        self.edges: list[tuple[list, list, dict]] = []  # (tails, rhs, features)
        self.edge_head: list[int | None] = []
        self.node_in: list[list[int]] = []

    def fail(self, message: str) -> NoReturn:
        raise InputError(message, self.path)

    def rule(self, text: str, where: str) -> list:
        rhs = self.rule_cache.get(text)
        if rhs is None:
            rhs = rule_target(text)
            if rhs is None:
                self.fail(f"{where}: expected a rule '[LHS] ||| source ||| target', got {text[:80]!r}")
            self.rule_cache[text] = rhs
        return rhs

    def read_features(self, value) -> None:
        if self.features_seen:
            self.fail("'features' is given twice")
        self.features_seen = True
        if value is None:
            return
        if not isinstance(value, list) or isinstance(value, _Object) or not all(isinstance(v, str) for v in value):
            self.fail("'features' must be a list of feature names (strings)")
        self.features = value

    def read_rules(self, value) -> None:
        if value is None:
            return
        if not isinstance(value, list) or isinstance(value, _Object) or len(value) % 2:
            self.fail("'rules' must be a flat list of rule id, rule string pairs")
        for i in range(0, len(value), 2):
            rid, text = value[i], value[i + 1]
            if not _is_int(rid) or not isinstance(text, str):
                self.fail(f"'rules' item {i}: expected an integer rule id and a rule string, "
                          f"got {show_value(rid)}, {show_value(text)}")
            if rid in self.rules:
                self.fail(f"rule id {rid} is defined twice")
            self.rules[rid] = self.rule(text, f"rule {rid}")

    def read_edges(self, value) -> None:
        if not isinstance(value, list) or isinstance(value, _Object):
            self.fail(f"'edges' must be a list of edge objects (at edge {len(self.edges)})")
        for item in value:
            e = len(self.edges)
            where = f"edge {e}"
            if not isinstance(item, _Object):
                self.fail(f"{where}: expected an object {{\"tail\":..., \"feats\":..., \"rule\":...}}")
            fields = {}
            for key, v in item:
                if key not in ("tail", "spans", "feats", "rule"):
                    self.fail(f"{where}: unexpected key {key!r}; expected tail, spans, feats, rule")
                if key in fields:
                    self.fail(f"{where}: key {key!r} is given twice")
                fields[key] = v
            tails = fields.get("tail")
            tails = [] if tails is None else tails
            if not isinstance(tails, list) or isinstance(tails, _Object) or not all(
                    _is_int(t) and t >= 0 for t in tails):
                self.fail(f"{where}: 'tail' must be a list of node ids")
            spans = fields.get("spans", [])
            if not isinstance(spans, list) or isinstance(spans, _Object) or len(spans) > 4 or not all(
                    _is_int(s) for s in spans):
                self.fail(f"{where}: 'spans' must be a list of at most 4 integers")
            if "rule" not in fields:
                self.fail(f"{where} has no rule (forests written without rules cannot be read)")
            rule = fields["rule"]
            if _is_int(rule):
                rhs = self.rules.get(rule)
                if rhs is None:
                    self.fail(f"{where}: rule id {rule} is not defined in 'rules' before the edge")
            elif isinstance(rule, str):
                rhs = self.rule(rule, where)
            else:
                self.fail(f"{where}: 'rule' must be a rule id or a rule string")
            for k in rhs:
                if not isinstance(k, str) and k >= len(tails):
                    self.fail(f"{where}: the rule's target side refers to [{k + 1}] but the edge has "
                              f"{len(tails)} tails")
            self.edges.append((tails, rhs, self.edge_features(fields.get("feats"), where)))
            self.edge_head.append(None)

    def edge_features(self, feats, where: str) -> dict:
        out: dict[str, float] = {}
        if feats is None:
            return out
        if not isinstance(feats, list) or isinstance(feats, _Object) or len(feats) % 2:
            self.fail(f"{where}: 'feats' must be a flat list of feature, value pairs")
        for i in range(0, len(feats), 2):
            f, v = feats[i], feats[i + 1]
            if _is_int(f):
                if not 0 <= f < len(self.features):
                    self.fail(f"{where}: feature index {f} is not in 'features' "
                              f"({len(self.features)} names)")
                name = self.features[f]
            elif isinstance(f, str):
                name = f
            else:
                self.fail(f"{where}: a feature must be an index into 'features' or a name, got {show_value(f)}")
            if not _is_number(v):
                self.fail(f"{where}: the value of feature {name!r} must be a number, got {show_value(v)}")
            try:
                v = float(v)
            except OverflowError:  # an integer beyond the double range
                v = math.inf
            if not math.isfinite(v):
                self.fail(f"{where}: the value of feature {name!r} overflows a double; expected a finite number")
            out[name] = v  # cdec's set_value: a repeated feature keeps its last value
        return out

    def read_node(self, value) -> None:
        v = len(self.node_in)
        where = f"node {v}"
        if not isinstance(value, _Object):
            self.fail(f"{where}: expected an object {{\"in_edges\":[...]}}")
        seen = set()
        in_edges: list = []
        for key, x in value:
            if key in seen:
                self.fail(f"{where}: key {key!r} is given twice")
            seen.add(key)
            if key == "in_edges":
                in_edges = [] if x is None else x
                if not isinstance(in_edges, list) or isinstance(in_edges, _Object) or not all(
                        _is_int(e) for e in in_edges):
                    self.fail(f"{where}: 'in_edges' must be a list of edge numbers")
            elif key == "cat":
                if x is not None and not isinstance(x, str):
                    self.fail(f"{where}: 'cat' must be a string")
            else:
                self.fail(f"{where}: unexpected key {key!r}; expected in_edges, cat")
        for e in in_edges:
            if not 0 <= e < len(self.edges):
                self.fail(f"{where}: in-edge {e} is not one of the {len(self.edges)} edges read so far")
            if self.edge_head[e] is not None:
                self.fail(f"{where}: edge {e} is already an in-edge of node {self.edge_head[e]}")
            self.edge_head[e] = v
            for t in self.edges[e][0]:
                if t >= v:
                    self.fail(f"{where}: its in-edge {e} has tail {t}, which is not an earlier node "
                              "(nodes must be in topological order)")
        self.node_in.append(in_edges)

    def read(self, top) -> Hypergraph:
        if not isinstance(top, _Object):
            self.fail("expected a JSON object with 'rules', 'features', 'edges' and 'node' keys")
        handlers = {"features": self.read_features, "rules": self.read_rules, "edges": self.read_edges,
                    "node": self.read_node, "is_sorted": self.read_is_sorted}
        for key, value in top:
            handler = handlers.get(key)
            if handler is None:
                self.fail(f"unexpected key {key!r}; expected rules, features, edges, node, is_sorted")
            handler(value)
        if not self.node_in:
            self.fail("the hypergraph has no nodes")
        for e, head in enumerate(self.edge_head):
            if head is None:
                self.fail(f"edge {e} is not an in-edge of any node")
        b = HypergraphBuilder(source=self.source)
        for name in self.features:
            b.feature(name)  # keep the file's feature order, used or not
        for v in range(len(self.node_in)):
            b.node(v)
        for v, in_edges in enumerate(self.node_in):
            for e in in_edges:
                tails, rhs, feats = self.edges[e]
                b.edge(v, tails, rhs, feats)
        return b.build(len(self.node_in) - 1)

    def read_is_sorted(self, value) -> None:
        if not isinstance(value, bool):
            self.fail("'is_sorted' must be true or false")


def _constant_at(text: str) -> tuple[int, int]:
    """(line, column), 1-based, of the first NaN/Infinity outside a JSON string (the one
    the decoder met first: it reads left to right and stops at the first problem)."""
    m = _CONSTANT.search(text)
    while m is not None and m.group(1) is None:
        m = _CONSTANT.search(text, m.end())
    at = m.start(1) if m is not None else 0
    line_start = text.rfind("\n", 0, at) + 1
    return text.count("\n", 0, at) + 1, at - line_start + 1


def parse_cdec_json(text: str, source: str = "") -> Hypergraph:
    """One hypergraph from the JSON text of a cdec forest; ``source`` names the file in errors."""
    path = source or None
    if not text.strip():
        raise InputError("empty file; expected a cdec JSON forest (one JSON object)", path)
    try:
        top = json.loads(text, object_pairs_hook=_Object, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", path, exc.lineno) from None
    except _Bad as exc:
        line, column = _constant_at(text)
        raise InputError(f"invalid JSON: {exc} (column {column})", path, line) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer beyond Python's digit limit
        raise InputError(f"invalid JSON: {str(exc)[:200]}", path) from None
    return _Reader(source).read(top)


def read_cdec_json(path) -> Hypergraph:
    """One hypergraph from a (possibly gzipped) cdec JSON forest file; the goal is its last node."""
    path = os.fspath(path)
    with open_binary(path) as fh:
        try:
            data = fh.read()
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"corrupt or truncated compressed data ({exc})", path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        first = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        line = data[first:] if end < 0 else data[first:end]
        raise InputError(invalid_utf8(line, exc.start - first), path, data.count(b"\n", 0, exc.start) + 1) from None
    return parse_cdec_json(text, path)


def _check_word(w: str) -> None:
    if not w or _ASCII_SPACE.search(w) or _SEP in w or target_slot(w) is not None:
        raise ValueError(f"the word {w!r} cannot be written in a cdec rule (it would not read back "
                         "as one target word)")


def format_cdec_json(hg: Hypergraph) -> str:
    """The JSON text of ``hg`` in cdec's layout (one line ending in a newline).

    Raises ValueError for words a cdec rule cannot hold or edges with more than 9 tails
    referred to by the target side.
    """
    dumps = json.dumps
    rule_ids: dict[str, int] = {}
    rule_parts: list[str] = []
    checked: set[int] = set()
    edge_rule = []
    for e in range(hg.n_edges):
        src, tgt = [], []
        for r in hg.edge_rhs(e).tolist():
            if r >= 0:
                if r not in checked:
                    _check_word(hg.words[r])
                    checked.add(r)
                src.append(hg.words[r])
                tgt.append(hg.words[r])
            else:
                k = -r
                if k > 9:
                    raise ValueError(f"edge {e} refers to tail {k}; cdec rules refer to at most 9 tails")
                src.append(f"[X,{k}]")
                tgt.append(f"[{k}]")
        rule = " ".join(["[X]", _SEP, *src, _SEP, *tgt])
        rid = rule_ids.get(rule)
        if rid is None:
            rid = rule_ids[rule] = len(rule_ids) + 1
            rule_parts.append(f"{rid},{dumps(rule, ensure_ascii=False)}")
        edge_rule.append(rid)
    parts = ['{"rules":[', ",".join(rule_parts), '],"features":[',
             ",".join(dumps(n, ensure_ascii=False) for n in hg.feature_names), "]"]
    for v in range(hg.n_nodes):
        edges = []
        for e in hg.in_edges(v):
            a, b = int(hg.feat_indptr[e]), int(hg.feat_indptr[e + 1])
            feats = ",".join(f"{int(i)},{format_shortest(x)}"
                             for i, x in zip(hg.feat_ids[a:b].tolist(), hg.feat_values[a:b].tolist()))
            tails = ",".join(str(t) for t in hg.edge_tails(e).tolist())
            edges.append(f'{{"tail":[{tails}],"spans":[-1,-1,-1,-1],"feats":[{feats}],"rule":{edge_rule[e]}}}')
        in_edges = ",".join(str(e) for e in hg.in_edges(v))
        parts.append(f',"edges":[{",".join(edges)}],"node":{{"in_edges":[{in_edges}]}}')
    parts.append("}\n")
    return "".join(parts)


def write_cdec_json(path, hg: Hypergraph) -> None:
    """Write ``hg`` as a cdec JSON forest (gzipped if ``path`` ends in ``.gz``), atomically."""
    path = os.fspath(path)
    data = format_cdec_json(hg).encode("utf-8")
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_output(path, "wb") as fh:
        fh.write(data)
