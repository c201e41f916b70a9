"""Scalar, obvious reference of ``mtplug dtrain --update mira``: one sentence's hope/fear
choice and PA-I step, and an epoch over fixed k-best lists (Eidelman 2012, as
mtplug.dtrain.update documents it).

A k-best list is a list of rows, a row a list of ``(feature id, value)`` pairs in the
order the list stores them; weights are a dict ``{id: value}`` (missing ids weigh 0).
Sums run in the order the rows list their entries and ‖Δf‖² is summed exactly
(:func:`math.fsum`), so the compiled selection and the NumPy step must agree bit for bit.
"""

from __future__ import annotations

import math

#: (model coefficient, score coefficient) of each strategy (cost = 1 - score, alpha = 1)
HOPE = {"hope": (1.0, 1.0), "lu": (0.0, 1.0)}
FEAR = {"fear": (1.0, -1.0), "mc": (0.0, -1.0), "pb": (1.0, 0.0)}


def model_scores(rows, w):
    """w·f of every row, summed in the row's order."""
    out = []
    for row in rows:
        acc = 0.0
        for fid, v in row:
            acc += v * w.get(fid, 0.0)
        out.append(acc)
    return out


def choose(model, scores, coefs):
    """The position maximising a·model + b·score; ties: larger model score, then the first."""
    a, b = coefs
    best = 0
    for h in range(1, len(model)):
        v, bv = a * model[h] + b * scores[h], a * model[best] + b * scores[best]
        if v > bv or (v == bv and model[h] > model[best]):
            best = h
    return best


def sentence(rows, scores, w, hope="hope", fear="fear", C=0.01):
    """One sentence: returns (new weights, info) with info = dict(hope, fear, loss, eta,
    stepped). ``w`` is not changed."""
    w = dict(w)
    info = {"hope": None, "fear": None, "loss": 0.0, "eta": 0.0, "stepped": False}
    if len(rows) < 2:
        return w, info
    model = model_scores(rows, w)
    h, f = choose(model, scores, HOPE[hope]), choose(model, scores, FEAR[fear])
    info.update(hope=h, fear=f)
    if h == f:
        return w, info
    loss = (scores[h] - scores[f]) - (model[h] - model[f])
    info["loss"] = loss
    if not loss > 0:
        return w, info
    diff: dict[int, float] = {}
    for fid, v in rows[h]:
        diff[fid] = diff.get(fid, 0.0) + v
    for fid, v in rows[f]:
        diff[fid] = diff.get(fid, 0.0) - v
    sq = math.fsum(d * d for d in diff.values())
    if not sq > 0:
        return w, info
    eta = min(C, loss / sq)
    for fid, d in diff.items():
        w[fid] = w.get(fid, 0.0) + eta * d
    info.update(eta=eta, stepped=True)
    return w, info


def epoch(lists, w, hope="hope", fear="fear", C=0.01):
    """One pass over ``lists`` = [(rows, scores)], each sentence scored with the weights of
    the moment; returns (weights, [info per sentence], averaged weights) where the average
    is the mean of the weights after each sentence (``mira_average``), summed in sentence
    order feature by feature."""
    infos = []
    total: dict[int, float] = {}
    for rows, scores in lists:
        w, info = sentence(rows, scores, w, hope, fear, C)
        infos.append(info)
        for fid in set(total) | set(w):
            total[fid] = total.get(fid, 0.0) + w.get(fid, 0.0)
    return w, infos, {fid: v / len(lists) for fid, v in total.items()}
