"""Reading zip entries, zstd ones included, on a Python whose ``zipfile`` has no zstd (before 3.14).

Inspect AI writes its ``.eval`` logs with zstd entries (compression method 93) since 0.3.206.
Python's ``zipfile`` reads method 93 only from 3.14; before that, an entry is read here from its
local header and decompressed with the zstd codec pyarrow already brings (a requirement of the
project for Parquet), so no package is added. Inspect splits a large entry into several zstd frames;
one decompression call reads them all. The CRC and the size the central directory gives are
checked, so a damaged entry is an error, not a wrong trace.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from typing import IO

from .common import WrongKind

ZSTD = 93  # the zip compression method number for zstd (APPNOTE 4.4.5)
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"


class EntryError(Exception):
    """An entry that cannot be read: too large, damaged, or compressed in a way we do not read."""


def read_entry(archive: zipfile.ZipFile, name: str, *, max_bytes: int) -> bytes:
    """The unpacked bytes of one entry, at most ``max_bytes`` (else ``EntryError``)."""
    try:
        info = archive.getinfo(name)
    except KeyError as exc:
        raise EntryError("not in the zip") from exc
    if info.file_size > max_bytes:
        raise EntryError(f"{info.file_size:,} bytes unpacked, over the limit of {max_bytes:,}")
    if info.compress_type == ZSTD and not _stdlib_reads_zstd():
        data = _zstd_entry(archive, info)
    else:
        try:
            with archive.open(info) as handle:
                data = handle.read(max_bytes + 1)
        except (zipfile.BadZipFile, NotImplementedError, OSError, zlib.error, EOFError) as exc:
            raise EntryError(f"damaged or unreadable ({exc})") from exc
    if len(data) > max_bytes:  # the header lied about the size
        raise EntryError(f"more than {max_bytes:,} bytes unpacked")
    return data


def _stdlib_reads_zstd() -> bool:
    return getattr(zipfile, "ZIP_ZSTANDARD", None) == ZSTD


def _zstd_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    import pyarrow as pa  # only for zstd entries; a worker importing it once keeps it

    source = archive.fp
    if source is None:
        raise EntryError("the zip is closed")
    source.seek(info.header_offset)
    header = source.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        raise EntryError("damaged: its local header is cut short")
    fields = _LOCAL_HEADER.unpack(header)
    if fields[0] != _LOCAL_SIGNATURE:
        raise EntryError("damaged: no local header where the directory points")
    if fields[2] & 0x1:  # the general purpose flags
        raise EntryError("encrypted")
    source.seek(fields[9] + fields[10], 1)  # the name and the extra field
    packed = source.read(info.compress_size)
    if len(packed) != info.compress_size:
        raise EntryError("damaged: the zip ends inside it")
    try:
        data = pa.Codec("zstd").decompress(packed, decompressed_size=info.file_size, asbytes=True)
    except (OSError, ValueError) as exc:  # pyarrow's codec errors are OSErrors
        raise EntryError(f"damaged zstd data ({exc})") from exc
    if zlib.crc32(data) != info.CRC:
        raise EntryError("damaged: its checksum does not match")
    return bytes(data)


def open_zip(stream: IO[bytes], what: str = "The zip") -> zipfile.ZipFile:
    """The upload as a zip, or one message saying it is not one."""
    try:
        return zipfile.ZipFile(stream)
    except zipfile.BadZipFile as exc:
        raise WrongKind(f"{what} could not be read as a zip ({exc}).") from exc
