"""Where a row came from, in words (spec runs.md, "The verified tier"): a hosted run's record as the board
shows it, and the flag when the endpoint answered as another model than the one it was asked for.
Plain functions of the stored ``run_record``; the leaderboard and the submission pages call them."""

from __future__ import annotations

from typing import Any

RUN_LABEL = "run by the platform"
FILE_LABEL = "submitted file"
# What of a run's record the public board shows (the endpoint's host is the researcher's business).
PUBLIC_RUN_KEYS = ("run_id", "harness_version", "prompt_versions", "sampling", "protocol", "date", "model_ids",
                   "declared_model", "split", "modes", "protocol_version", "protocol_page")


def public_run(run_record: Any) -> dict[str, Any]:
    """The public part of a hosted run's record ({} for an upload)."""
    if not isinstance(run_record, dict):
        return {}
    return {k: run_record.get(k) for k in PUBLIC_RUN_KEYS if k in run_record}


# An uploaded file's own word for the protocol it ran under (run_model writes it on every line): shown, not verified.
FILE_CLAIM = "the uploaded file says so (run_model writes it on every line); not verified"


def file_claim(results: Any, page: str) -> dict[str, Any]:
    """For an uploaded file whose every line names the same protocol version (results["protocol_claimed"],
    evaluation/metrics/run_lines.py): that version, the benchmark's protocol ``page`` and ``claimed_by_file``;
    {} otherwise. The board shows it as a hosted run's protocol link, worded as the uploader's claim."""
    version = results.get("protocol_claimed") if isinstance(results, dict) else None
    if not isinstance(version, str) or not version:
        return {}
    return {"protocol_version": version, "protocol_page": page, "claimed_by_file": True}


def other_model_ids(run: Any) -> list[str]:
    """The model ids the endpoint returned that differ from the model the run asked for."""
    if not isinstance(run, dict):
        return []
    declared = str(run.get("declared_model") or "")
    ids = run.get("model_ids") or []
    return [str(i) for i in ids if str(i) != declared] if isinstance(ids, list) else []


def mismatch_text(run: Any) -> str:
    """"the endpoint answered as X, asked for Y", or "" when every returned id is the declared model."""
    others = other_model_ids(run)
    if not others:
        return ""
    return f"the endpoint answered as {', '.join(others)}, asked for {run.get('declared_model') or '(no model)'}"


def _sampling_text(sampling: Any) -> str:
    if not isinstance(sampling, dict) or not sampling:
        return "not recorded"
    return ", ".join(f"{k} {v}" for k, v in sorted(sampling.items()) if v is not None) or "defaults"


def run_facts(run: Any) -> list[tuple[str, str]]:
    """(label, text) of a run's record, as the model page spells it out."""
    if not isinstance(run, dict) or not run:
        return []
    prompts = run.get("prompt_versions") or {}
    ids = run.get("model_ids") or []
    return [
        ("Harness", str(run.get("harness_version") or "not recorded")),
        ("Prompts", ", ".join(f"{m}: {p}" for m, p in prompts.items()) if isinstance(prompts, dict) and prompts
         else "not recorded"),
        ("Sampling", _sampling_text(run.get("sampling"))),
        ("Protocol", str(run.get("protocol") or "not recorded")),
        ("Protocol version", f"{run['protocol_version']}, stated at {run.get('protocol_page') or 'the protocol page'}"
         if run.get("protocol_version") else "not recorded (a run before protocol versions)"),
        ("Date", str(run.get("date") or "not recorded")),
        ("Model asked for", str(run.get("declared_model") or "not recorded")),
        ("Model ids returned", ", ".join(map(str, ids)) if ids else "none recorded"),
    ]


def run_title(run: Any) -> str:
    """The same facts on one line, for a tooltip on the overview."""
    facts = "; ".join(f"{label.lower()}: {text}" for label, text in run_facts(run))
    flag = mismatch_text(run)
    return f"{RUN_LABEL}. {facts}" + (f". Flag: {flag}" if flag else "")
