"""The words of ``--metric`` (issue 37, "--metric means the same everywhere"): one help
text for every command that takes it, and one message for several values where one
metric is measured. Imports nothing, so that ``mtplug.cli``, ``mtplug.tuning.config`` and
``mtplug.experiments.evaluate_command`` share it without importing each other (and
``--help`` needs no numpy)."""

from __future__ import annotations

from collections.abc import Sequence

#: what --metric takes, in the same words in every command (its role comes first: see
#: metric_help) and in docs/metrics.md; literal, so that --help needs no numpy
METRIC_HELP = ("bleu, chrf, chrf++, ter (sacrebleu's), wer, per, cder, moses-ter (as Moses's scorers), m2 (Moses's "
               "M2SCORER F0.5 of grammatical error corrections; --ref is an M2 file), moses-chrf and bleudoc "
               "(Moses's CHRF and BLEUDOC scorers as their code means them; bleudoc's --ref is XML), ext:FILE "
               "(external scores, one per n-best line), bleu-ter or ter-bleu. A comma joins the parts of one "
               "interpolation, as in Moses's --sctype BLEU,TER: bleu,ter (equal weights) or bleu:0.6,moses-ter:0.4 "
               "(Moses's --scconfig weights:0.6+0.4). Several metrics are several values after one --metric, "
               "in the commands that report several (score, evaluate): --metric bleu ter")


def metric_help(role: str, default: str = "bleu") -> str:
    """The --metric help of a command: its ``role``, then :data:`METRIC_HELP`."""
    return f"{role}: {METRIC_HELP} (default: {default})"


def one_metric_error(option: str, texts: Sequence[str]) -> str:
    """The message of several --metric values (or a YAML ``metric:`` list) where one metric
    is measured, in the same words in every command."""
    joined = f"{option} {','.join(texts)}" if option.startswith("-") else f"{option}: {','.join(texts)}"
    return (f"{option} takes one metric here, got {len(texts)} ({' '.join(texts)}); the parts of an "
            f"interpolation are joined by a comma: {joined}")
