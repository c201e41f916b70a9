"""Slow, obvious reranking of n-best text: parse every line in Python, score it, sort.

Features as the n-best reader names them: a Moses dense label ``X=`` followed by m
values gives ``X_0 .. X_{m-1}``; a label with ``_`` (Moses sparse) or a ``name=value``
token (cdec) gives one feature of that name. Blank lines (spaces and tabs only) are
skipped; ties keep reading order.
"""

from __future__ import annotations


def parse_line(line: str) -> tuple[int, str, dict[str, float]]:
    """``(sentence id, tokens joined by one space, {feature: value})`` of one n-best line."""
    fields = line.split("|||")
    features: dict[str, float] = {}
    label, count = None, 0
    for tok in fields[2].split():
        if tok.endswith("="):
            label, count = tok[:-1], 0
        elif "=" in tok:
            name, value = tok.split("=", 1)
            features[name] = float(value)
        elif "_" in label:
            features[label] = float(tok)
        else:
            features[f"{label}_{count}"] = float(tok)
            count += 1
    return int(fields[0]), " ".join(fields[1].split()), features


def hypotheses(texts: list[str]) -> list[tuple[int, str, dict[str, float], str]]:
    """Every hypothesis of the files' contents, in reading order: (sid, text, features, raw line)."""
    out = []
    for text in texts:
        for raw in text.split("\n"):
            line = raw[:-1] if raw.endswith("\r") else raw
            if line.strip(" \t"):
                out.append((*parse_line(line), line))
    return out


def ranked(texts: list[str], weights: dict[str, float]) -> list[list[tuple[float, str, str]]]:
    """Per sentence 0 .. max id: its hypotheses best first as (score, text, raw line)."""
    hyps = hypotheses(texts)
    per_sentence: list[list[tuple[float, str, str]]] = [[] for _ in range(max(h[0] for h in hyps) + 1)]
    for sid, text, feats, raw in hyps:
        score = 0.0
        for name, value in feats.items():
            score += weights.get(name, 0.0) * value
        per_sentence[sid].append((score, text, raw))
    return [sorted(rows, key=lambda r: -r[0]) for rows in per_sentence]   # sorted() is stable


def one_best(texts: list[str], weights: dict[str, float]) -> list[str]:
    """The 1-best text per sentence (ties: the hypothesis read first)."""
    return [rows[0][1] for rows in ranked(texts, weights)]


def nonblank_lines(data: bytes) -> list[tuple[int, bytes]]:
    """``(1-based line number, line without its end)`` of every non-blank line, as the
    n-best scanner counts hypotheses (one trailing CR dropped)."""
    out = []
    for i, raw in enumerate(data.split(b"\n"), 1):
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if line.strip(b" \t"):
            out.append((i, line))
    return out
