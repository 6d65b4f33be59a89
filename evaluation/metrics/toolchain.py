"""Toolchain metrics (metrics.md section 5, VTC-Bench Sec. 3.3).

The effective toolchain is found by backtracking the image-reference graph from the image the
answer was drawn from. Each call reads one image reference and writes one; a reference written
twice is resolved to the most recent writer before the reader (so a re-used name does not link
a call to a later one). An omitted output is named as the tool runner names it: ``img<n>``,
one above the highest ``img`` number among the images so far, so ``answer_image: "img2"``
after two calls without outputs is the second call's image.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .types import ToolCall

ORIGINAL = "img0"


_NUMBERED = re.compile(r"^img(\d+)$")  # the runner's pattern for numbered references


def _ref_number(ref: str | None) -> int:
    """n for a reference ``img<n>`` (the runner's numbered names), else -1."""
    if ref:
        m = _NUMBERED.match(ref)
        if m:
            return int(m.group(1))
    return -1


def resolve_refs(calls: Sequence[ToolCall], n_images: int = 1) -> list[tuple[str, str]]:
    """Fill formats.md defaults as the tool runner does (annotation/imagetools/runner.py): a
    missing input is the previous call's output (img0 first); a missing output is the next new
    reference ``img<n>``, one above the highest number among the images so far (the sample's
    ``n_images`` media, img0 .. img<n_images-1>, and every earlier output)."""
    resolved: list[tuple[str, str]] = []
    prev = ORIGINAL
    top = max(0, n_images - 1)
    for call in calls:
        src = call.input if call.input else prev
        dst = call.output if call.output else f"img{top + 1}"
        top = max(top, _ref_number(dst))
        resolved.append((src, dst))
        prev = dst
    return resolved


def effective_chain(calls: Sequence[ToolCall], answer_image: str | None = None, n_images: int = 1) -> tuple[int, ...]:
    """Indices (ascending) of the calls that are ancestors of the answer image.

    ``answer_image`` defaults to the last image produced; an answer drawn from ``img0`` or from
    a reference no call wrote gives an empty chain. References are those of ``resolve_refs``
    (an omitted output is named as the tool runner names it; a sample with several media numbers
    them after its ``n_images``), in one pass.
    """
    n = len(calls)
    if n == 0:
        return ()
    latest: dict[str, int] = {}
    parent: list[int] = []
    prev = ORIGINAL
    top = max(0, n_images - 1)
    for i, call in enumerate(calls):
        parent.append(latest.get(call.input or prev, -1))
        out = call.output
        if out:
            if out.startswith("img"):
                k = _ref_number(out)
                if k > top:
                    top = k
        else:
            top += 1
            out = f"img{top}"
        prev = out
        latest[out] = i
    node = latest.get(prev if answer_image is None else answer_image, -1)
    if node < 0:
        return ()
    chain = [node]
    node = parent[node]
    while node >= 0:
        chain.append(node)
        node = parent[node]
    chain.reverse()
    return tuple(chain)


def input_media(calls: Sequence[ToolCall], n_images: int) -> list[str | None]:
    """For each call, the sample's medium (``img<k>``, k < n_images) its input image comes from,
    following earlier calls' outputs back; None when it reads an image nobody made."""
    media = {f"img{k}" for k in range(max(1, n_images))}
    origin: dict[str, str | None] = {ref: ref for ref in media}
    out: list[str | None] = []
    for src, dst in resolve_refs(calls, n_images):
        root = origin.get(src)
        out.append(root)
        if dst not in media:  # a call never replaces one of the sample's media
            origin[dst] = root
    return out


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance over tool-name sequences (order-aware)."""
    if not a:
        return len(b)
    if not b:
        return len(a)
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def normalized_edit_distance(a: Sequence[str], b: Sequence[str]) -> float:
    """Edit distance / length of the longer sequence, in [0, 1]; 0.0 when both are empty."""
    longest = max(len(a), len(b))
    return edit_distance(a, b) / longest if longest else 0.0


def toolset_prf(predicted: Sequence[str], reference: Sequence[str]) -> tuple[float, float, float]:
    """Precision, recall, F1 of the set of predicted tool names against the reference set.

    An empty prediction has precision 0 against a non-empty reference (it chose no right
    tool); both empty is a perfect 1, 1, 1.
    """
    p, r = set(predicted), set(reference)
    if not p and not r:
        return 1.0, 1.0, 1.0
    hit = len(p & r)
    precision = hit / len(p) if p else 0.0
    recall = hit / len(r) if r else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hit else 0.0
    return precision, recall, f1
