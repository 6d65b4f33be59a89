"""Key steps drafted by an LLM through the configured OpenAI-compatible endpoint (a Celery task).

The draft is stored on its own row, not in the annotation, so it never races the annotator's
editor: the page offers the drafted steps, which enter the annotation marked `llm` and
unverified until a person ticks each one. The prompt is a versioned file in annotation/prompts/.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.models import Annotation, DraftStatus, KeyStepDraft
from config.celery import task_by_name

PROMPT_VERSION = "key_steps_v1"
PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
MAX_STEPS = 12


def llm_unavailable_reason() -> str | None:
    """Why "Draft with LLM" cannot run, or None when it can."""
    if not settings.JUDGE_OPENAI_BASE_URL:
        return "No LLM endpoint is configured: set JUDGE_OPENAI_BASE_URL (and JUDGE_OPENAI_API_KEY, JUDGE_OPENAI_MODEL)."
    return None


def key_step_draft_request(*, annotation: Annotation, user: AbstractBaseUser) -> KeyStepDraft:
    draft = KeyStepDraft.objects.create(annotation=annotation, requested_by=user, prompt_version=PROMPT_VERSION,
                                        model=settings.JUDGE_OPENAI_MODEL)
    # By name: annotation.tasks imports this module, so importing it back would close a circle.
    transaction.on_commit(lambda: task_by_name("annotation.tasks.draft_key_steps").delay(draft.pk))
    return draft


def _prompt(annotation: Annotation, data: dict) -> str:
    template = (PROMPTS_DIR / f"{PROMPT_VERSION}.txt").read_text()
    return template.format(
        question=data.get("question") or annotation.sample.question,
        options=json.dumps(data.get("options"), ensure_ascii=False),
        answer=data.get("answer") or "(not given yet)",
        transform=json.dumps(data.get("transform") or []),
        regions=json.dumps([r["box"] for r in data.get("regions") or []]),
    )


def parse_steps(text: str) -> list[str]:
    """The steps from the model's reply: a JSON list of strings (fenced or not), else its lines."""
    match = re.search(r"\[.*\]", text, re.S)
    if match:
        try:
            value = json.loads(match.group(0))
            if isinstance(value, list):
                return [str(s).strip() for s in value if str(s).strip()][:MAX_STEPS]
        except json.JSONDecodeError:
            pass
    lines = [re.sub(r"^\s*(\d+[.)]|[-*])\s*", "", line).strip() for line in text.splitlines()]
    return [line for line in lines if line][:MAX_STEPS]


def key_step_draft_run(*, draft_id: int) -> None:
    """Idempotent: only a queued draft is taken (atomically), so a task delivered twice runs once."""
    if not KeyStepDraft.objects.filter(pk=draft_id, status=DraftStatus.QUEUED).update(status=DraftStatus.RUNNING):
        return
    draft = KeyStepDraft.objects.select_related("annotation__sample").get(pk=draft_id)
    try:
        steps = _complete(draft.annotation)
    except Exception as error:  # noqa: BLE001 - any endpoint failure is shown to the annotator
        draft.status, draft.error = DraftStatus.FAILED, f"{type(error).__name__}: {error}"[:2000]
        draft.save(update_fields=["status", "error", "updated_at"])
        return
    draft.status, draft.steps = (DraftStatus.DONE, steps) if steps else (DraftStatus.FAILED, [])
    draft.error = "" if steps else "the model's reply held no steps"
    draft.save(update_fields=["status", "steps", "error", "updated_at"])


def _complete(annotation: Annotation) -> list[str]:
    from openai import OpenAI

    from annotation.workbench.editing import annotation_snapshot
    from annotation.workbench.previews import oracle_preview_png

    data = annotation_snapshot(annotation)
    reason = llm_unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    client = OpenAI(base_url=settings.JUDGE_OPENAI_BASE_URL, api_key=settings.JUDGE_OPENAI_API_KEY or "none",
                    timeout=settings.JUDGE_OPENAI_TIMEOUT, max_retries=settings.JUDGE_OPENAI_MAX_RETRIES)
    # The oracle image (transform applied, cut to the regions) is the evidence the steps describe.
    png = oracle_preview_png(annotation.sample, data["transform"], [r["box"] for r in data["regions"]], max_side=768)
    content = [{"type": "text", "text": _prompt(annotation, data)},
               {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}}]
    reply = client.chat.completions.create(model=settings.JUDGE_OPENAI_MODEL, temperature=0,
                                           messages=[{"role": "user", "content": content}])
    return parse_steps(reply.choices[0].message.content or "")
