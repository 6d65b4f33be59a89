"""What one sample gives a run: plain data, read by the Django side from the benchmark."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Medium:
    """One of a sample's media, as the model sees it: a still (a video stands for its poster)."""

    ref: str  # img0, img1, ...
    path: str  # a file on this machine (the private storage's path)
    width: int = 0
    height: int = 0


@dataclass(frozen=True)
class RunItem:
    uid: str
    question: str
    options: dict[str, str] | None
    answer_type: str
    media: tuple[Medium, ...]
    split: str = ""
    # The oracle image I_E's recipe (formats.md): the recovery transform, then the regions (in
    # pixels of the transformed img0). Empty for a sample with no approved annotation: I_E is then
    # img0 as given.
    transform: list = field(default_factory=list)
    regions: list = field(default_factory=list)
    hint: str = ""
