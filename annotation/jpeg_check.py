"""Is a JPEG whole? A walk over its marker segments, about 30 times quicker than decoding it (plain Python).

Decoding a JPEG to check it (benchmark_fields._decode_checked) refuses two kinds of file: one that ends before
its data does (truncated), and one whose markers libjpeg cannot parse (a table, frame or scan header of the
wrong length or contents, a scan naming a component or table that is not there). Damage inside the
entropy-coded data is never refused: libjpeg only warns about it, and Pillow ignores the warning. So a walk that
checks every marker segment and finds the end-of-image marker after the last scan refuses what the decode
refuses; `jpeg_whole` says True only then, and for a kind of JPEG it does not know (arithmetic coding, lossless,
hierarchical) it says False. False means "decode it to find out": the caller then decodes, and the message for
a damaged file is the decoder's, as before.
"""

from __future__ import annotations

import re

SOI, EOI, SOS, DHT, DQT, DRI = 0xD8, 0xD9, 0xDA, 0xC4, 0xDB, 0xDD
HUFFMAN_FRAMES = {0xC0: False, 0xC1: False, 0xC2: True}  # SOF0 baseline, SOF1 extended, SOF2 progressive
SKIPPED = {*range(0xE0, 0xF0), 0xFE, 0xDC}  # APPn, COM, DNL: libjpeg reads past them
# In entropy-coded data, 0xFF is followed by 0x00 (a stuffed byte), a restart marker or more 0xFF (fill): any
# other byte after it is the marker that ends the scan.
SCAN_END = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")


def jpeg_whole(data: bytes) -> bool:
    """True when every marker segment of the JPEG is well formed and an end-of-image marker follows its last scan."""
    n = len(data)
    if data[:2] != b"\xff\xd8":
        return False
    pos = 2
    components: dict[int, int] | None = None  # component id -> its blocks in an MCU (h x v sampling)
    progressive = False
    tables: set[tuple[int, int]] = set()  # (class: 0 DC, 1 AC; destination) of the Huffman tables defined
    quantization: set[int] = set()  # destinations of the quantization tables defined
    frame_tables: set[int] = set()  # those the frame's components use
    scans = 0
    while True:
        while pos + 1 < n and data[pos] == 0xFF and data[pos + 1] == 0xFF:  # fill bytes before a marker
            pos += 1
        if pos + 1 >= n or data[pos] != 0xFF:
            return False
        marker = data[pos + 1]
        if marker == EOI:
            return scans > 0
        if marker not in HUFFMAN_FRAMES and marker not in SKIPPED and marker not in (DHT, DQT, DRI, SOS):
            return False  # libjpeg refuses an unknown marker; other frames, a restart outside a scan: decode it
        if pos + 4 > n:
            return False
        length = (data[pos + 2] << 8) | data[pos + 3]
        body, end = pos + 4, pos + 2 + length
        if length < 2 or end > n:
            return False
        if marker in HUFFMAN_FRAMES:
            if components is not None:
                return False
            frame = _frame_components(data, body, end)
            if frame is None:
                return False
            components, frame_tables = frame
            progressive = HUFFMAN_FRAMES[marker]
        elif marker == DHT:
            if not _huffman_tables(data, body, end, tables):
                return False
        elif marker == DQT:
            if not _quantization_tables(data, body, end, quantization):
                return False
        elif marker == DRI and length != 4:
            return False
        elif marker == SOS:
            if components is None or not frame_tables <= quantization:
                return False
            if not _scan_header(data, body, end, components, tables, progressive):
                return False
            scans += 1
            found = SCAN_END.search(data, end)
            if found is None:  # the data stops inside the scan: truncated
                return False
            end = found.start()
        pos = end


def _frame_components(data: bytes, body: int, end: int) -> tuple[dict[int, int], set[int]] | None:
    """The components of a frame header (id -> blocks in an MCU) and the quantization tables they use, or None
    when it is malformed or sampled in a way libjpeg does not decode (a fractional ratio)."""
    if end - body < 6:
        return None
    precision, height, width, count = data[body], (data[body + 1] << 8) | data[body + 2], \
        (data[body + 3] << 8) | data[body + 4], data[body + 5]
    if precision not in (8, 12) or height == 0 or width == 0 or not 1 <= count <= 4 or end - body != 6 + 3 * count:
        return None
    sampling: dict[int, tuple[int, int]] = {}
    quantization = set()
    for k in range(count):
        at = body + 6 + 3 * k
        h, v, quant = data[at + 1] >> 4, data[at + 1] & 15, data[at + 2]
        if not (1 <= h <= 4 and 1 <= v <= 4) or quant > 3:
            return None
        sampling[data[at]] = (h, v)
        quantization.add(quant)
    most_h, most_v = max(h for h, _ in sampling.values()), max(v for _, v in sampling.values())
    if len(sampling) != count or any(most_h % h or most_v % v for h, v in sampling.values()):
        return None
    return {ident: h * v for ident, (h, v) in sampling.items()}, quantization


def _quantization_tables(data: bytes, body: int, end: int, tables: set[int]) -> bool:
    at = body
    while at < end:
        precision, destination = data[at] >> 4, data[at] & 15
        if precision > 1 or destination > 3:
            return False
        tables.add(destination)
        at += 1 + 64 * (1 + precision)
    return at == end


def _huffman_tables(data: bytes, body: int, end: int, tables: set[tuple[int, int]]) -> bool:
    """Read a DHT segment's tables into `tables`; False when they do not fill it exactly or are malformed."""
    at = body
    while at < end:
        if at + 17 > end:
            return False
        kind, destination = data[at] >> 4, data[at] & 15
        counts = data[at + 1:at + 17]
        total = sum(counts)
        if kind > 1 or destination > 3 or total == 0 or total > 256 or at + 17 + total > end:
            return False
        code = 0  # the canonical codes must fit their lengths, as libjpeg checks (else "Bogus Huffman table")
        for length, count in enumerate(counts[:max(k for k, c in enumerate(counts) if c) + 1], start=1):
            code += count
            if code >= 1 << length:
                return False
            code <<= 1
        if kind == 0 and max(data[at + 17:at + 17 + total]) > 15:  # a DC table's symbols are bit counts
            return False
        tables.add((kind, destination))
        at += 17 + total
    return at == end


def _scan_header(data: bytes, body: int, end: int, components: dict[int, int], tables: set[tuple[int, int]],
                 progressive: bool) -> bool:
    if end - body < 1:
        return False
    count = data[body]
    if not 1 <= count <= 4 or end - body != 4 + 2 * count:
        return False
    start, stop, approx = data[body + 1 + 2 * count], data[body + 2 + 2 * count], data[body + 3 + 2 * count]
    if progressive:
        if start > 0 and count != 1:  # an AC scan has one component
            return False
        if stop > 63 or start > stop or (start == 0) != (stop == 0) or approx >> 4 > 13 or approx & 15 > 13:
            return False
        if approx >> 4 and approx & 15 != (approx >> 4) - 1:  # a refinement scan adds one bit
            return False
    elif (start, stop, approx) != (0, 63, 0):
        return False
    named = {data[body + 1 + 2 * k] for k in range(count)}
    if len(named) != count or not named <= components.keys():  # a component named twice, or not in the frame
        return False
    if count > 1 and sum(components[ident] for ident in named) > 10:  # libjpeg's most blocks in an MCU
        return False
    for k in range(count):
        selectors = data[body + 2 + 2 * k]
        if start == 0 and approx >> 4 == 0 and (0, selectors >> 4) not in tables:
            return False  # a DC scan (not a refinement) needs its DC table
        if stop > 0 and (1, selectors & 15) not in tables:
            return False
    return True
