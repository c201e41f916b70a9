# Stub for the compiled module built from pyx/_mira_kbest.pyx.

def mira_block_text(
    block: bytes,  # the k lines after cdec --mr_mira_compat's count line
    pos: int,  # the sentence id written on every line
) -> tuple[bytes, list[str], int, int]: ...
# (text: 'pos ||| hyp ||| name=%g ... ||| score' lines, hypothesis strings,
#  cut values repaired, lines left unresolved)
