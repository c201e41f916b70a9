"""PLF (Python Lattice Format): the word-lattice input of Moses and cdec, one lattice per line.

Syntax (cdec ``decoder/hg_io.cc`` ReadFromPLF, Moses ``PCNTools``)::

    lattice ::= '(' [column {',' column} [',']] ')'
    column  ::= '(' arc {',' arc} [','] ')'
    arc     ::= '(' WORD ',' {cost ','} [sparse ','] JUMP [','] ')'
    sparse  ::= '{' [WORD ':' NUMBER {',' WORD ':' NUMBER} [',']] '}'   (cdec)
              | NAME '=' NUMBER {',' NAME '=' NUMBER}                     (Moses)

``WORD`` is single-quoted; inside it ``\\'`` and ``\\\\`` are the only escapes. cdec and
Moses read single quotes only, so a double-quoted word is an error (Python would accept
it, the decoders would not). Spaces and tabs may surround every token. ``*EPS*`` is the
epsilon word. The last item of an arc is always the jump (a positive integer), as in
Moses and cdec's own test input (tests/system_tests/lattice); so ``('B', 1)`` is an arc
with no cost. Older cdec (hg_io.cc without the sparse form) read a lone number as a cost
with jump 1; mtplug writes a lone number only for lattices whose arcs have no features.

Mapping to :class:`~mtplug.hypergraph.Hypergraph` (PLF nodes 0..n-1 are the columns,
node n is the final node and the goal): node 0 has one axiom edge (no tails, empty
right-hand side, no features); the arc of column i with jump j is an edge from node i to
node i+j with right-hand side ``[tail 0, word]`` (``[tail 0]`` for ``*EPS*``). Dense costs
become features ``LatticeCost_0 .. LatticeCost_{k-1}``, sparse entries keep their names.

mtplug is stricter than the decoders where they guess or abort: a jump past the final
node, an empty column, a node no arc reaches, a non-numeric or non-finite cost, an
unknown escape, a feature given twice on one arc and trailing text are all
:class:`~mtplug.errors.InputError`, naming the file, the line and the 1-based character
position where reading stopped (``f.plf:3: character 17: ...``). In a PLF file every line
is one lattice; a blank line is an error (an empty lattice is written ``()``), an empty
file holds no lattices.

Node ids of the hypergraph are :class:`~mtplug.hypergraph.HypergraphBuilder`'s topological
order, which need not be the PLF column order. The writer numbers the columns by node
id, so a PLF file that mtplug wrote reads back with the same node ids and is written
back byte-identical.

Writing (one line per lattice, as cdec's AsPLF: every arc and column followed by ``,``):
an arc's costs are written as a dense tuple when every arc of the lattice carries exactly
``LatticeCost_0 .. LatticeCost_{k-1}`` for one k, otherwise as a ``{'name':value}`` dict
(names sorted); numbers are the shortest text that reads back as the same double.
"""

from __future__ import annotations

import gzip
import math
import os
import re
from collections.abc import Iterable
from typing import Any, NoReturn

import numpy as np

from ..errors import InputError
from ..fileio import atomic_output, read_text_lines
from ..hypergraph import Hypergraph, HypergraphBuilder
from .number_text import format_shortest

EPSILON = "*EPS*"
DENSE_PREFIX = "LatticeCost_"

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JUMP = re.compile(r"\+?[0-9]+")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
# a bare (unquoted) token ends at any of these: a number, a jump or a Moses name=value
_BARE_END = frozenset(" \t,(){}:'\"")
_BLANK = " \t"


class _Reader:
    """Cursor over one PLF line; :meth:`fail` raises InputError at the cursor's character."""

    def __init__(self, text: str, source: str, line: int | None):
        self.text = text
        self.pos = 0
        self.source = source or None
        self.line = line

    def fail(self, message: str, pos: int | None = None) -> NoReturn:
        col = (self.pos if pos is None else pos) + 1
        raise InputError(f"character {col}: {message}", self.source, self.line)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_blanks(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _BLANK:
            pos += 1
        self.pos = pos

    def found(self) -> str:
        c = self.peek()
        return "the end of the line" if not c else repr(c)

    def expect(self, char: str, what: str) -> None:
        self.skip_blanks()
        if self.peek() != char:
            self.fail(f"expected {what}, found {self.found()}")
        self.pos += 1

    def after_item(self, close: str, what: str) -> bool:
        """Consume ``,`` (True: another item or the close may follow) or ``close`` (False)."""
        self.skip_blanks()
        c = self.peek()
        if c == ",":
            self.pos += 1
            return True
        if c == close:
            self.pos += 1
            return False
        self.fail(f"expected ',' or {close!r} after {what}, found {self.found()}")
        return False  # unreachable

    def at_close(self, close: str) -> bool:
        self.skip_blanks()
        if self.peek() == close:
            self.pos += 1
            return True
        return False

    def word(self) -> str:
        self.skip_blanks()
        c = self.peek()
        if c == '"':
            self.fail("words are single-quoted ('...'); cdec and Moses do not read double quotes")
        if c != "'":
            self.fail(f"expected a single-quoted word, found {self.found()}")
        start = self.pos
        text, pos = self.text, self.pos + 1
        out: list[str] = []
        while True:
            if pos >= len(text):
                self.fail("unterminated quoted word", start)
            c = text[pos]
            if c == "'":
                self.pos = pos + 1
                return "".join(out)
            if c == "\\":
                nxt = text[pos + 1] if pos + 1 < len(text) else ""
                if nxt not in ("'", "\\"):
                    self.fail("unknown escape in a quoted word; only \\' and \\\\ are allowed", pos)
                out.append(nxt)
                pos += 2
            else:
                out.append(c)
                pos += 1

    def bare(self) -> tuple[str, int]:
        """An unquoted token (number, jump or Moses ``name=value``) and its position."""
        self.skip_blanks()
        start, text, pos = self.pos, self.text, self.pos
        while pos < len(text) and text[pos] not in _BARE_END:
            pos += 1
        if pos == start:
            self.fail(f"expected a number, found {self.found()}")
        self.pos = pos
        return text[start:pos], start

    def number(self, token: str, at: int, what: str) -> float:
        if not _NUMBER.fullmatch(token):
            if _NON_FINITE.fullmatch(token):
                self.fail(f"{what} is {token!r}; expected a finite number", at)
            self.fail(f"expected a number for {what}, found {token!r}", at)
        value = float(token)
        if not math.isfinite(value):
            self.fail(f"{what} {token!r} overflows a double; expected a finite number", at)
        return value

    def sparse_dict(self) -> list[tuple[str, float, int]]:
        self.pos += 1  # '{'
        out: list[tuple[str, float, int]] = []
        if self.at_close("}"):
            return out
        while True:
            self.skip_blanks()
            at = self.pos
            name = self.word()
            self.expect(":", f"':' after feature name {name!r}")
            token, tat = self.bare()
            out.append((name, self.number(token, tat, f"feature {name!r}"), at))
            if not self.after_item("}", "a feature value") or self.at_close("}"):
                return out

    def arc(self):
        """``(word, [(feature name, value)], jump, position of the jump)`` of one ``(...)`` arc."""
        self.expect("(", "'(' starting an arc")
        self.skip_blanks()
        word_at = self.pos
        word = self.word()
        if not word:
            self.fail(f"empty word; the epsilon word is {EPSILON!r}", word_at)
        self.expect(",", f"',' after the word {word!r}")
        items: list[tuple[str, Any, int]] = []  # (kind, payload, pos): 'num' text | 'named' (name, value) | 'dict' list
        while True:
            self.skip_blanks()
            at = self.pos
            if self.peek() == "{":
                items.append(("dict", self.sparse_dict(), at))
            else:
                if self.peek() == ")":
                    self.fail("expected a cost or the jump (a positive integer), found ')'")
                token, at = self.bare()
                name, eq, value = token.partition("=")
                if eq:
                    if not name:
                        self.fail(f"expected 'name=value', found {token!r}", at)
                    items.append(("named", (name, self.number(value, at, f"feature {name!r}")), at))
                else:
                    items.append(("num", token, at))
            if not self.after_item(")", "an arc item") or self.at_close(")"):
                break
        kind, jump_text, jump_at = items.pop()
        if kind != "num" or not _JUMP.fullmatch(jump_text):
            self.fail("expected the jump (a positive integer) as the last item of the arc", jump_at)
        feats: list[tuple[str, float, int]] = []
        seen: set[str] = set()
        sparse = False
        for kind, payload, at in items:
            if kind == "num":
                if sparse:
                    self.fail("a dense cost cannot follow sparse features", at)
                pairs = [(f"{DENSE_PREFIX}{len(feats)}", self.number(payload, at, "a cost"), at)]
            else:
                sparse = True
                pairs = payload if kind == "dict" else [(payload[0], payload[1], at)]
            for fname, fvalue, pos in pairs:
                if fname in seen:
                    self.fail(f"feature {fname!r} is given twice on one arc", pos)
                seen.add(fname)
                feats.append((fname, fvalue, pos))
        return word, [(n, v) for n, v, _ in feats], int(jump_text), jump_at


def parse_plf(text: str, source: str = "", line: int | None = None) -> Hypergraph:
    """One PLF lattice (one line, see the module docstring) as a lattice :class:`Hypergraph`.

    ``source``/``line`` name the file and 1-based line in errors; the goal is the final node.
    """
    r = _Reader(text, source, line)
    r.expect("(", "'(' starting a PLF lattice")
    columns: list[tuple[list, int]] = []  # per column: its arcs, and where it starts
    if not r.at_close(")"):
        while True:
            r.skip_blanks()
            start = r.pos
            r.expect("(", "'(' starting a column or ')' ending the lattice")
            arcs = []
            if not r.at_close(")"):
                while True:
                    arcs.append(r.arc())
                    if not r.after_item(")", "an arc") or r.at_close(")"):
                        break
            if not arcs:
                r.fail(f"the column of node {len(columns)} is empty; expected at least one arc", start)
            columns.append((arcs, start))
            if not r.after_item(")", "a column") or r.at_close(")"):
                break
    r.skip_blanks()
    if r.pos < len(text):
        r.fail(f"unexpected text after the lattice: {text[r.pos:r.pos + 20]!r}")

    n = len(columns)
    reached = np.zeros(n + 1, dtype=bool)
    reached[0] = True
    b = HypergraphBuilder(source=source)
    for v in range(n + 1):
        b.node(v)  # provisional ids in column order: keeps the builder's order close to the file's
    b.edge(0, (), (), line=line)
    for i, (arcs, _) in enumerate(columns):
        for word, feats, jump, at in arcs:
            if jump < 1:
                r.fail(f"arc {word!r} from node {i} has jump {jump}; expected a jump of at least 1", at)
            if i + jump > n:
                r.fail(f"arc {word!r} from node {i} jumps {jump}, past the final node {n}", at)
            reached[i + jump] = True
            rhs = [0] if word == EPSILON else [0, word]
            b.edge(i + jump, (i,), rhs, feats, line=line)
    if not reached.all():
        v = int(np.flatnonzero(~reached)[0])
        r.fail(f"no arc reaches node {v}", columns[v][1])
    return b.build(n)


def read_plf(path) -> list[Hypergraph]:
    """Every lattice of a (possibly gzipped) PLF file, one per line, in file order.

    Blank lines are errors (an empty lattice is ``()``); errors name file:line and character.
    """
    path = os.fspath(path)
    out = []
    for i, text in enumerate(read_text_lines(path), 1):
        if not text.strip(_BLANK):
            raise InputError("blank line; expected a PLF lattice (an empty lattice is written '()')", path, i)
        out.append(parse_plf(text, path, i))
    return out


def _quote(s: str, what: str) -> str:
    if "\n" in s or "\r" in s:
        raise ValueError(f"{what} {s!r} contains a line break, which a one-line PLF cannot hold")
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def format_plf(hg: Hypergraph) -> str:
    """The one-line PLF text of a lattice hypergraph (no newline).

    Raises ValueError unless ``hg`` has the layout :func:`parse_plf` produces: node 0 has
    exactly one incoming edge, an axiom with empty right-hand side and no features;
    every other edge has one tail and right-hand side ``[tail 0]`` or ``[tail 0, word]``;
    every node but the goal has an outgoing edge; no word is empty or ``*EPS*``.
    """
    if not hg.is_lattice:
        raise ValueError("not a lattice: an edge has more than one tail")
    n = hg.n_nodes
    first = list(hg.in_edges(0))
    if len(first) != 1 or len(hg.edge_tails(first[0])) or len(hg.edge_rhs(first[0])) \
            or hg.edge_features(first[0]):
        raise ValueError("not a PLF lattice: node 0 must have exactly one edge, an axiom with no words "
                         "and no features")
    out_edges: list[list[int]] = [[] for _ in range(n)]
    arcs = []
    for e in range(hg.n_edges):
        if e == first[0]:
            continue
        tails, rhs = hg.edge_tails(e), hg.edge_rhs(e)
        if len(tails) != 1:
            raise ValueError(f"not a PLF lattice: edge {e} into node {int(hg.edge_head[e])} has no tail")
        if not (len(rhs) in (1, 2) and rhs[0] == -1 and (len(rhs) == 1 or rhs[1] >= 0)):
            raise ValueError(f"not a PLF lattice: edge {e} has right-hand side {rhs.tolist()}; expected "
                             "[tail 0] or [tail 0, word]")
        word = EPSILON if len(rhs) == 1 else hg.words[int(rhs[1])]
        if len(rhs) == 2 and word in ("", EPSILON):
            raise ValueError(f"edge {e} has the word {word!r}, which PLF cannot write as a word")
        out_edges[int(tails[0])].append(e)
        arcs.append(e)
    for v in range(n - 1):
        if not out_edges[v]:
            raise ValueError(f"not a PLF lattice: node {v} has no outgoing edge")

    feats = {e: hg.edge_features(e) for e in arcs}
    dense = len({len(f) for f in feats.values()}) <= 1 and all(
        set(f) == {f"{DENSE_PREFIX}{i}" for i in range(len(f))} for f in feats.values())
    parts = ["("]
    for v in range(n - 1):
        parts.append("(")
        for e in out_edges[v]:
            rhs = hg.edge_rhs(e)
            word = EPSILON if len(rhs) == 1 else hg.words[int(rhs[1])]
            f = feats[e]
            if dense:
                costs = "".join(format_shortest(f[f"{DENSE_PREFIX}{i}"]) + "," for i in range(len(f)))
            else:
                costs = "{" + ",".join(f"{_quote(k, 'feature name')}:{format_shortest(f[k])}"
                                       for k in sorted(f)) + "},"
            parts.append(f"({_quote(word, 'word')},{costs}{int(hg.edge_head[e]) - v}),")
        parts.append("),")
    parts.append(")")
    return "".join(parts)


def write_plf(path, hgs: Iterable[Hypergraph]) -> None:
    """Write lattices one per line (gzipped if ``path`` ends in ``.gz``), atomically.

    Raises ValueError (and leaves ``path`` untouched) if one is not a PLF lattice.
    """
    path = os.fspath(path)
    data = "".join(format_plf(hg) + "\n" for hg in hgs).encode("utf-8")
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_output(path, "wb") as fh:
        fh.write(data)
