"""Moses's phrase-based search graph (``-output-search-graph FILE`` and
``-output-search-graph-extended FILE``) read into one :class:`~mtplug.hypergraph.Hypergraph`
(a lattice) per sentence.

The format, as moses/Manager.cpp ``OutputSearchNode`` writes it (Moses HEAD; the nodes
come from ``Manager::GetSearchGraph``): one line per hypothesis of every sentence, the
lines of a sentence together, each starting with the sentence id. Stacks are printed in
order, each hypothesis followed by the hypotheses recombined into it. The empty
hypothesis::

    0 hyp=0 stack=0
    0 hyp=0 stack=0 forward=4 fscore=-2.28                      (extended form)

Every other hypothesis, plain form::

    0 hyp=4 stack=2 back=1 score=-3.9 transition=-2.28 forward=-1 fscore=0 covered=1-1 out=house

and one that lost recombination to hypothesis 4 (it is printed after 4)::

    0 hyp=7 stack=2 back=3 score=-4.9 transition=-2.85 recombined=4 forward=-1 fscore=0 covered=1-1 out=house

``stack`` is the number of source words covered, ``back`` the hypothesis extended,
``transition`` = score - score of ``back`` (the weighted model score of this step),
``covered`` the source span of the last phrase, ``out`` its target words (factors joined
by ``|`` when several output factors are printed; nothing after ``out=`` for a phrase
with no words). ``forward``/``fscore`` are the best continuation and are not used here.
The extended form replaces ``out=`` by the unweighted feature scores of the transition
and the phrase pair::

    0 hyp=4 stack=2 back=1 score=-3.9 transition=-2.28 forward=-1 fscore=0 covered=1-1 scores="core=(-1,1,-0.356675,-1.20397,-0.693147,-1.60944,0,-4.1) WT_house~Haus=1" out="Haus|house"

``scores`` is ``ScoreComponentCollection`` printed by moses/FeatureVector.cpp
``FVector::print``: ``core=(v,v,...) `` with the dense scores in the order of Moses's
dense vector (the order of the n-best list's features), then sparse ``name=value``
pairs separated by single spaces (with no sparse feature the field ends in ``) "``).
``out`` is the source phrase, ``|``, the target phrase; the factor separator is also
``|``, so the separator is found as the one token with the most ``|`` (source words
before it tell the number of source factors, else target words after it tell the
number of target factors, else the target is taken to have one factor).

The lattice of a sentence: every hypothesis that has a line of its own is a node; its
line is an edge from ``back`` with target side ``[yield of back] out-words``; a
recombined line is one more edge of that shape into the hypothesis it was recombined
into. Hypothesis 0 gets an axiom edge (no words). Moses prints only the hypotheses that
lead to the last stack (``Manager::GetConnectedGraph``), so the largest ``stack`` of a
sentence is its length: the goal is a node with one edge (target side: the tail's yield,
no features) from every hypothesis of that stack (Moses marks them ``forward=-1``). A
sentence that Moses could not translate (or an empty one) has only hypothesis 0; its
lattice yields the empty string. ``stack`` goes to ``Hypergraph.node_source_len`` (the
goal: the sentence length).

Edge features, a name -> value mapping:

* plain form: one feature ``transition``, the transition's weighted model score (the
  unweighted scores are not in this form);
* extended form: the dense scores named by ``dense_names`` (mtplug's column names in
  Moses's order, e.g. an n-best list's feature names ``Distortion0_0 LM0_0 ...``) or,
  without it, ``core_0, core_1, ...``; sparse scores under their own names. Zero scores
  are kept, as Moses prints them; a name twice on one line is an error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import InputError
from ..fileio import iter_text_lines
from ..hypergraph import Hypergraph, HypergraphBuilder
from .number_text import parse_number

#: the feature of a plain-form edge
TRANSITION = "transition"
#: dense scores of the extended form when no names are given: core_0, core_1, ...
CORE_PREFIX = "core_"

#: largest stack (source words covered; Hypergraph.node_source_len is int32)
MAX_STACK = 2 ** 31 - 1
# at most 18 digits: ids fit in int64, and int() never meets Python's digit limit
_UINT = re.compile(r"[0-9]{1,18}")
_INT = re.compile(r"-?[0-9]{1,18}")
_SPAN = re.compile(r"[0-9]{1,18}-[0-9]{1,18}")
_INITIAL_KEYS = {"hyp", "stack", "forward", "fscore"}
_REQUIRED = ("hyp", "stack", "back", "score", "transition", "forward", "fscore", "covered")
_KEYS = set(_REQUIRED) | {"recombined"}
_GOAL = "goal"  # builder key of the synthetic goal (hypotheses are int keys)


def read_search_graph(path: str | os.PathLike, *,
                      dense_names: Sequence[str] | None = None) -> dict[int, Hypergraph]:
    """sentence id -> lattice of that sentence, for every sentence in the file.

    ``dense_names``: names of the extended form's dense scores, in Moses's order (ignored
    for the plain form). Raises :class:`InputError` (file and line) on malformed lines,
    references to hypotheses that have no line, or sentences whose lines are not together.
    """
    path = os.fspath(path)
    if dense_names is not None:
        dense_names = list(dense_names)
        if len(set(dense_names)) != len(dense_names):
            raise ValueError("dense_names has duplicates")
    reader = _Reader(path, dense_names)
    graphs: dict[int, Hypergraph] = {}
    current: _Sentence | None = None
    for line_no, text in iter_text_lines(path):
        if not text.strip():
            continue
        sid, item = reader.parse(text, line_no)
        if current is None or sid != current.sid:
            if current is not None:
                graphs[current.sid] = current.build(path)
            if sid in graphs:
                raise InputError(f"sentence {sid} appears again after other sentences; "
                                 f"expected the lines of a sentence together", path, line_no)
            current = _Sentence(sid)
        current.add(item, path)
    if current is not None:
        graphs[current.sid] = current.build(path)
    return graphs


def _split_words(text: str) -> list[str]:
    # Moses separates words by single spaces; other (e.g. non-ASCII) spaces belong to words
    return [w for w in text.split(" ") if w]


@dataclass
class _Item:
    line: int
    hyp: int
    stack: int
    back: int | None = None        # None: the empty hypothesis
    recombined: int | None = None
    words: list = field(default_factory=list)
    features: list = field(default_factory=list)


class _Reader:
    """Parses lines; remembers the file's form and its number of dense scores."""

    def __init__(self, path: str, dense_names: list[str] | None):
        self.path = path
        self.dense_names = dense_names
        self.extended: bool | None = None
        self.n_core: int | None = None

    def error(self, message: str, line: int) -> InputError:
        return InputError(message, self.path, line)

    def parse(self, text: str, line: int) -> tuple[int, _Item]:
        scores = out = None
        cut = text.find(' scores="')
        if cut >= 0:
            head, rest = text[:cut], text[cut + len(' scores="'):]
            end = rest.find('" out="')
            if end < 0 or not rest.endswith('"') or len(rest) < end + len('" out="') + 1:
                raise self.error('expected scores="..." out="source|target" at the end of the line', line)
            scores, out = rest[:end], rest[end + len('" out="'):-1]
        else:
            cut = text.find(" out=")
            if cut >= 0:
                head, out = text[:cut], text[cut + len(" out="):]
            else:
                head = text
        tokens = head.split()
        if not tokens or not _UINT.fullmatch(tokens[0]):
            raise self.error(f"expected a sentence id (a non-negative integer) first, got {text[:20]!r}", line)
        sid = int(tokens[0])
        fields: dict[str, str] = {}
        for tok in tokens[1:]:
            key, eq, value = tok.partition("=")
            if not eq or key not in _KEYS:
                raise self.error(f"expected key=value fields ({', '.join(_REQUIRED)}), got {tok[:40]!r}", line)
            if key in fields:
                raise self.error(f"field {key}= appears twice", line)
            fields[key] = value
        for key in ("hyp", "stack"):
            if key not in fields:
                raise self.error(f"expected a {key}= field", line)
        hyp, stack = self.uint(fields, "hyp", line), self.uint(fields, "stack", line)
        if stack > MAX_STACK:
            raise self.error(f"stack={stack} is more source words than a sentence can have ({MAX_STACK})", line)
        if "back" not in fields:
            return sid, self.initial(fields, hyp, stack, out, line)
        missing = [k for k in _REQUIRED if k not in fields]
        if missing:
            raise self.error(f"expected field {missing[0]}= (a hypothesis line has {', '.join(_REQUIRED)})", line)
        if hyp == 0:
            raise self.error("hypothesis 0 is the empty hypothesis and cannot have back=", line)
        if not _INT.fullmatch(fields["forward"]) or not _SPAN.fullmatch(fields["covered"]):
            raise self.error(f"expected forward=<integer> covered=<start>-<end>, got forward={fields['forward'][:20]} "
                             f"covered={fields['covered'][:40]}", line)
        item = _Item(line, hyp, stack, back=self.uint(fields, "back", line))
        if "recombined" in fields:
            item.recombined = self.uint(fields, "recombined", line)
            if item.recombined == hyp:
                raise self.error(f"hypothesis {hyp} is recombined into itself", line)
        self.check_form(scores is not None, line)
        if out is None:
            raise self.error("expected out=<target phrase> at the end of the line", line)
        if scores is None:
            item.words = _split_words(out)
            item.features = [(TRANSITION, parse_number(fields["transition"], self.path, line, TRANSITION))]
        else:
            item.words = self.target_words(out, line)
            item.features = self.scores(scores, line)
        return sid, item

    def initial(self, fields: dict, hyp: int, stack: int, out, line: int) -> _Item:
        if hyp != 0:
            raise self.error("expected back= (only hypothesis 0, the empty hypothesis, has none)", line)
        extra = sorted(set(fields) - _INITIAL_KEYS)
        if extra or out is not None:
            what = f"{extra[0]}=" if extra else "out="
            raise self.error(f"the empty hypothesis (hyp=0) has a field {what}; expected only hyp, stack, "
                             "forward, fscore", line)
        return _Item(line, 0, stack)

    def uint(self, fields: dict, key: str, line: int) -> int:
        value = fields[key]
        if not _UINT.fullmatch(value):
            raise self.error(f"expected {key}=<non-negative integer>, got {key}={value[:20]}", line)
        return int(value)

    def check_form(self, extended: bool, line: int) -> None:
        if self.extended is None:
            self.extended = extended
        elif self.extended != extended:
            forms = ("plain (out=...)", 'extended (scores="..." out="...")')
            raise self.error(f"line is in the {forms[extended]} form, earlier lines in the {forms[not extended]} form",
                             line)

    def scores(self, text: str, line: int) -> list[tuple[str, float]]:
        """``core=(v,...) name=v ...`` -> [(name, value)]."""
        if not text.startswith("core=(") or ")" not in text:
            raise self.error(f'expected scores="core=(...) ...", got scores="{text[:40]}"', line)
        close = text.index(")")
        core_text, sparse_text = text[len("core=("):close], text[close + 1:]
        core = core_text.split(",") if core_text else []
        if self.n_core is None:
            self.n_core = len(core)
            if self.dense_names is not None and len(self.dense_names) != len(core):
                raise self.error(f"{len(core)} dense scores, but {len(self.dense_names)} dense names were given", line)
        elif len(core) != self.n_core:
            raise self.error(f"{len(core)} dense scores; expected {self.n_core} as on earlier lines", line)
        names = self.dense_names or [f"{CORE_PREFIX}{j}" for j in range(len(core))]
        feats = [(name, parse_number(v, self.path, line, name)) for name, v in zip(names, core)]
        if sparse_text and not sparse_text.startswith(" "):
            raise self.error(f"expected a space after core=(...), got {sparse_text!r}", line)
        seen = {name for name, _ in feats}
        for tok in sparse_text.split():
            name, eq, value = tok.rpartition("=")
            if not eq or not name:
                raise self.error(f"expected a sparse score name=value, got {tok[:40]!r}", line)
            if name in seen:
                # Moses prints a feature vector with each name once; two values cannot both be right
                raise self.error(f"score {name!r} appears twice on one line (or a sparse name equals a dense one); "
                                 "expected each feature once", line)
            seen.add(name)
            feats.append((name, parse_number(value, self.path, line, name)))
        return feats

    def target_words(self, text: str, line: int) -> list[str]:
        """The target words of an extended ``out="source|target"`` field."""
        tokens = _split_words(text)
        bars = [t.count("|") for t in tokens]
        most = max(bars, default=0)
        if most == 0 or bars.count(most) != 1:
            raise self.error(f'cannot tell source from target in out="{text[:60]}" '
                             f"(expected one token with the source|target separator)", line)
        k = bars.index(most)
        if k > 0:                     # a source word before: source factors - 1 bars
            sep = bars[0] + 1
        elif k < len(tokens) - 1:     # a target word after: target factors - 1 bars
            sep = most - bars[-1]
        else:                         # one token: Moses's default of one output factor
            sep = most
        if not 1 <= sep <= most:
            raise self.error(f'cannot tell source from target in out="{text[:60]}" (words have different numbers '
                             f"of factors)", line)
        mid = tokens[k].split("|")
        target_start = "|".join(mid[sep:])
        return ([target_start] if target_start else []) + tokens[k + 1:]


@dataclass
class _Sentence:
    sid: int
    hyps: dict = field(default_factory=dict)   # hypothesis with a line of its own -> its item
    edges: list = field(default_factory=list)  # items of hypothesis lines (winners and recombined)

    def add(self, item: _Item, path: str) -> None:
        if item.recombined is None:
            if item.hyp in self.hyps:
                raise InputError(f"hypothesis {item.hyp} of sentence {self.sid} appears twice "
                                 f"(first on line {self.hyps[item.hyp].line})", path, item.line)
            self.hyps[item.hyp] = item
        if item.back is not None:
            self.edges.append(item)

    def build(self, path: str) -> Hypergraph:
        hyps = self.hyps
        for e in self.edges:
            if e.back not in hyps:
                raise InputError(f"back={e.back}: hypothesis {e.back} has no line of its own in sentence {self.sid}",
                                 path, e.line)
            head = e.hyp if e.recombined is None else e.recombined
            if head not in hyps:
                raise InputError(f"recombined={head}: hypothesis {head} has no line of its own in sentence "
                                 f"{self.sid}", path, e.line)
            if hyps[head].stack != e.stack:
                raise InputError(f"hypothesis {e.hyp} covers {e.stack} source words but is recombined into "
                                 f"hypothesis {head}, which covers {hyps[head].stack}", path, e.line)
            if e.stack <= hyps[e.back].stack:
                raise InputError(f"hypothesis {e.hyp} covers {e.stack} source words, no more than its back "
                                 f"hypothesis {e.back} ({hyps[e.back].stack})", path, e.line)
        b = HypergraphBuilder(source=path)
        for h, item in hyps.items():
            b.source_covered(h, item.stack)
        for h, item in hyps.items():
            if item.back is None:
                b.edge(h, (), (), line=item.line)
        for e in self.edges:
            head = e.hyp if e.recombined is None else e.recombined
            b.edge(head, (e.back,), [0, *e.words], e.features, line=e.line)
        last = max(item.stack for item in hyps.values())
        b.source_covered(_GOAL, last)
        for h, item in hyps.items():
            if item.stack == last:
                b.edge(_GOAL, (h,), (0,), line=item.line)
        return b.build(_GOAL)
