"""Opening inputs (gzip read transparently) and writing outputs atomically.

Every reader in ``mtplug.formats`` opens files through :func:`open_binary` /
:func:`read_text_lines`, and every writer goes through :func:`atomic_output`, so a
crash or a kill never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import tempfile
import zlib
from typing import IO, Iterator

from .errors import InputError

_GZIP_MAGIC = b"\x1f\x8b"
#: Bytes read per chunk by streaming readers: large enough to amortise Python overhead,
#: small enough to keep peak memory well below the store itself.
CHUNK_BYTES = 8 << 20


def open_binary(path: str | os.PathLike) -> IO[bytes]:
    """Open ``path`` for reading bytes; gzip is detected by its magic number, not the name."""
    path = os.fspath(path)
    try:
        raw = open(path, "rb")
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", path) from None
    except PermissionError:
        raise InputError("permission denied", path) from None
    if raw.peek(2)[:2] == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


def iter_chunks(path: str | os.PathLike, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[bytes, int]]:
    """Yield ``(chunk, first_line_number)`` where each chunk holds whole lines only.

    The last chunk may lack a final newline. Line numbers are 1-based. A truncated or
    corrupt gzip stream raises :class:`InputError` naming the file.
    """
    path = os.fspath(path)
    line_no = 1
    rest = b""
    with open_binary(path) as fh:
        while True:
            try:
                block = fh.read(chunk_bytes)
            except (EOFError, OSError, zlib.error) as exc:
                raise InputError(f"corrupt or truncated compressed data ({exc})", path) from None
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n")
            if cut < 0:
                rest = block
                continue
            chunk, rest = block[: cut + 1], block[cut + 1 :]
            yield chunk, line_no
            line_no += chunk.count(b"\n")
    if rest:
        yield rest, line_no


def decode_line(raw: bytes, path: str, line_no: int) -> str:
    """Decode one line as UTF-8, or raise :class:`InputError` naming the file and line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 at byte {exc.start}", path, line_no) from None


def iter_text_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """``(1-based line number, text)`` of a (possibly gzipped) UTF-8 text file, streamed;
    line ends (LF or CRLF) dropped."""
    path = os.fspath(path)
    for chunk, first in iter_chunks(path):
        raws = chunk.split(b"\n")
        if raws[-1] == b"":
            raws.pop()
        for i, raw in enumerate(raws):
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            yield first + i, decode_line(raw, path, first + i)


def read_text_lines(path: str | os.PathLike) -> list[str]:
    """All lines of a (possibly gzipped) UTF-8 text file, without line ends (LF or CRLF)."""
    return [text for _, text in iter_text_lines(path)]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "w", encoding: str = "utf-8") -> Iterator[IO]:
    """Write ``path`` through a temporary file in the same directory, renamed on success.

    If the body raises (or the process dies), ``path`` keeps its old content and the
    temporary file is removed (or, after a kill, left as ``.<name>.*.tmp``).
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        binary = "b" in mode
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": encoding, "newline": ""})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(path):
            # keep the permission bits of the file we replace
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
