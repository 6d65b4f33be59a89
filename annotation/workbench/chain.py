"""Marking a reference toolchain verified: only when it runs cleanly and every step is valid."""

from __future__ import annotations

from django.db import transaction

from annotation.models import Annotation
from annotation.workbench.previews import full_image
from annotation.imagetools import run_chain


class ChainNotVerified(Exception):
    pass


def annotation_chain_verify(*, annotation_id: int) -> Annotation:
    """Re-run the saved chain and set `chain_verified`, or raise ChainNotVerified saying why.
    Any later edit of the chain clears the flag (annotation.workbench.editing._write)."""
    annotation = Annotation.objects.select_related("sample").prefetch_related("tool_calls").get(pk=annotation_id)
    calls = list(annotation.tool_calls.all())
    if not calls:
        raise ChainNotVerified("There is no saved toolchain to verify.")
    result = run_chain(full_image(annotation.sample), [c.as_dict() for c in calls])
    if not result.ok:
        raise ChainNotVerified(f"Not verified: the chain fails ({result.error}).")
    pending = [str(c.position + 1) for c in calls if c.verdict != "valid"]
    if pending:
        raise ChainNotVerified(f"Not verified: mark step {', '.join(pending)} valid first (each step needs a person's check).")
    with transaction.atomic():
        # Only if the chain is still the one that was run (no save in between).
        current = list(Annotation.objects.select_for_update().get(pk=annotation_id).tool_calls.all())
        if [c.as_dict() for c in current] != [c.as_dict() for c in calls]:
            raise ChainNotVerified("The chain changed while it ran; run and verify it again.")
        Annotation.objects.filter(pk=annotation_id).update(chain_verified=True)
    annotation.chain_verified = True
    return annotation
