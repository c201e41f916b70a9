# Stub for the compiled module built from pyx/_mira_kbest.pyx.

def mira_block_text(
    block: bytes,  # the k lines after cdec --mr_mira_compat's count line
    pos: int,  # the sentence id written on every line
    fixes: dict[int, float] | None = None,  # hypothesis index -> its cut value, restored by the caller
) -> tuple[bytes, list[str], int, list[tuple[int, list[tuple[str, float]], str, list[float], bytes]]]: ...
# (text: 'pos ||| hyp ||| name=%g ... ||| score' lines, hypothesis strings,
#  cut values repaired, per unresolved line: (index, intact records, cut name,
#  16 candidates, score text))
