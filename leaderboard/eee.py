"""A row as Every Eval Ever records (schema 0.3.0; spec interop.md, "Out: Every Eval Ever").

Two files per row: the aggregate JSON (the run, the model, one ``evaluation_results`` item per mode and
figure) and ``<uuid>_samples.jsonl`` (one instance per scored prediction), laid out as EEE's store lays
them: ``data/<benchmark>/<developer>/<model>/``. Both objects are closed (``additionalProperties:
false``); every ``additional_details``, ``metadata`` and tool ``arguments`` value is a string.

What EEE has no place for goes where its own adapters put it: the cost as ``total_cost_usd`` (a
string) in ``generation_config.additional_details`` and ``model_info.additional_details``, as its HAL
adapter does; images as links to our dev-split media and re-run tool images, in an instance's
``metadata``; failure classes and process figures as strings (``score_details.details``, ``metadata``).
A figure not available on the row is left out, with the reason in ``additional_details``: never 0.
An instance whose answer no rule decided (it needs an LLM judge, metrics.md section 13) is left out too: EEE's
``score`` and ``is_correct`` take a number and a boolean only, and 0 / false would say wrong; the aggregate's
``source_metadata.additional_details.undecided_instances`` says how many and why.

Reads only; the caller decides what the reader may see (``include_test``): the public gets the dev
split's instances (as ``records.jsonl``), never a test sample's gold, media or per-sample verdict.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import uuid
import zipfile
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Sum

from annotation.imagetools import REGISTRY
from annotation.models import Sample, Split
from evaluation.harness import HARNESS_VERSION
from evaluation.metrics.profiles import NEEDS_JUDGE, UNDECIDED
from evaluation.validation import iter_prediction_objects
from evaluation.models import PredictionResult, Submission

SCHEMA_VERSION = "0.3.0"
LIBRARY = "vlm-tool-bench"  # this platform's harness and scorer (README)
TOOL_MODES = ("adaptive", "oracle")  # the modes that offer the tools
AVAILABILITY = {"open": "open_weights", "closed": "closed_weights"}


@dataclass(frozen=True, slots=True)
class EeeExport:
    folder: str  # data/<benchmark>/<developer>/<model>
    uuid: str
    aggregate: dict[str, Any]
    instances: list[dict[str, Any]]

    @property
    def samples_path(self) -> str:
        return f"{self.folder}/{self.uuid}_samples.jsonl"

    @property
    def aggregate_path(self) -> str:
        return f"{self.folder}/{self.uuid}.json"

    def samples_bytes(self) -> bytes:
        return "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in self.instances).encode()

    def zip_bytes(self) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(self.aggregate_path, json.dumps(self.aggregate, ensure_ascii=False, indent=2))
            archive.writestr(self.samples_path, self.samples_bytes())
        return buffer.getvalue()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "unknown"


def _s(value: Any) -> str:
    """A value as EEE's string-only maps take it."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _strings(mapping: dict[str, Any]) -> dict[str, str]:
    return {k: _s(v) for k, v in mapping.items() if v is not None}


def row_url(submission: Submission) -> str:
    return f"{settings.SITE_URL}/b/{submission.benchmark.slug}/m/{submission.pk}/"


def build(submission: Submission, *, include_test: bool, now: datetime) -> EeeExport:
    """The row's EEE records; ``include_test`` adds the test split's instances (without their gold)."""
    benchmark = submission.benchmark
    record = submission.run_record or {}
    model_ids = record.get("model_ids") or []
    model_id = model_ids[0] if len(model_ids) == 1 else submission.model_name
    developer = submission.organisation or (model_id.split("/", 1)[0] if "/" in model_id else "unknown")
    stamp = str(int(now.timestamp()))
    evaluation_id = f"{benchmark.slug}/{_slug(model_id)}/{stamp}"
    # A version-4 UUID (EEE's file names require one), drawn from the row and the moment: the same export twice
    # in one second names the same files.
    seed = hashlib.sha256(f"{row_url(submission)}#{stamp}#{include_test}".encode()).digest()
    export_uuid = str(uuid.UUID(bytes=seed[:16], version=4))
    folder = f"data/{_slug(benchmark.slug)}/{_slug(developer)}/{_slug(submission.model_name)}"
    left_out: list[str] = []  # the (mode, sample) of each undecided row, not an instance
    instances = list(_instances(submission, evaluation_id=evaluation_id, model_id=model_id, include_test=include_test,
                                left_out=left_out))
    samples = "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in instances).encode()
    costs = dict(PredictionResult.objects.filter(submission=submission).values_list("mode").annotate(Sum("cost_usd"))
                 .values_list("mode", "cost_usd__sum"))
    total_cost = sum(c for c in costs.values() if c is not None) if any(c is not None for c in costs.values()) else None
    model_details = _strings({
        "deployment_type": "externally_managed" if submission.provenance == "hosted" else "unknown",
        "model_availability": AVAILABILITY.get(submission.weights, "unknown"),
        "license": submission.license or None, "parameters_billions": submission.parameters_billions,
        "model_url": submission.model_url or None, "paper_url": submission.paper_url or None,
        "total_cost_usd": total_cost, "row": row_url(submission)})
    results = [item for mode, figures in ((submission.results or {}).get("modes") or {}).items()
               for item in _results(submission, mode, figures, record, costs.get(mode))]
    aggregate: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": str(int(submission.created_at.timestamp())),
        "retrieved_timestamp": stamp,
        "source_metadata": {
            "source_name": f"{benchmark.name} leaderboard", "source_type": "evaluation_run",
            "source_organization_name": LIBRARY, "source_organization_url": settings.SITE_URL,
            # A hosted run is ours, of someone else's model; an upload is the submitter's own run.
            "evaluator_relationship": "third_party" if submission.provenance == "hosted" else "other",
            "additional_details": _strings({"row": row_url(submission), "provenance": submission.provenance,
                                            "benchmark_version": benchmark.version,
                                            "instances": "every split" if include_test else "dev split only",
                                            "undecided_instances": (
                                                f"{len(left_out)} left out: their answers {NEEDS_JUDGE} (neither "
                                                "right nor wrong, and EEE's score takes a number)"
                                                if left_out else None)}),
        },
        "eval_library": {"name": LIBRARY, "version": record.get("harness_version") or HARNESS_VERSION,
                         "additional_details": _strings({"scorer_version": submission.scorer_version,
                                                         "judge": submission.judge_name or None,
                                                         "scoring_profile": benchmark.scoring})},
        "model_info": {"name": submission.model_name, "id": model_id, "developer": developer,
                       "additional_details": model_details},
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl", "file_path": f"{folder}/{export_uuid}_samples.jsonl", "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(samples).hexdigest(), "total_rows": len(instances)},
    }
    return EeeExport(folder=folder, uuid=export_uuid, aggregate=aggregate, instances=instances)


def _figure_value(figure: Any) -> tuple[float | None, dict[str, Any] | None, int]:
    if not isinstance(figure, dict):
        return None, None, 0
    return figure.get("value"), figure.get("interval"), int(figure.get("n") or 0)


def _details(figures: dict[str, Any]) -> dict[str, str]:
    """Process and toolchain figures, failures and answered share, as strings ("not available: ..." when so)."""
    out: dict[str, str] = {}
    for group in ("process", "toolchain"):
        for name, figure in (figures.get(group) or {}).items():
            value = figure.get("value") if isinstance(figure, dict) else figure
            reason = figure.get("reason") if isinstance(figure, dict) else None
            out[f"{group}.{name}"] = (_s(value) if value is not None
                                      else f"not available{': ' + reason if reason else ''}")
    for klass, count in (figures.get("failures") or {}).items():
        out[f"failures.{klass}"] = _s(count)
    return out


def _results(submission: Submission, mode: str, figures: dict[str, Any], record: dict[str, Any],
             cost: float | None) -> list[dict[str, Any]]:
    benchmark = submission.benchmark
    sampling = record.get("sampling") or {}
    generation_args: dict[str, Any] = {k: sampling[k] for k in ("temperature", "max_tokens")
                                       if isinstance(sampling.get(k), (int, float))}
    if mode in TOOL_MODES:
        names = list(benchmark.tools) or list(REGISTRY)
        generation_args["agentic_eval_config"] = {"available_tools": [
            {"name": n, **({"description": REGISTRY[n].description} if n in REGISTRY else {})} for n in names]}
    cost_figures = figures.get("cost") or {}
    mean_cost = (cost_figures.get("mean_cost_usd") or {}).get("value")
    generation = {"generation_args": generation_args, "additional_details": _strings({
        "mode": mode, "prompt_version": (record.get("prompt_versions") or {}).get(mode),
        "protocol_version": record.get("protocol_version"),
        "total_cost_usd": cost, "mean_cost_usd": mean_cost, "cost_per_10k_usd": cost_figures.get("per_10k_usd")})}
    source = {"dataset_name": benchmark.name, "source_type": "url",
              "url": f"{settings.SITE_URL}/b/{benchmark.slug}/data/",
              "additional_details": {"benchmark": benchmark.slug, "version": benchmark.version}}
    items = []
    for metric, label, figure in (
            ("accuracy", "Accuracy", (figures.get("accuracy") or {}).get("overall")),
            ("answered", "Share of samples answered (no failure)", figures.get("answered"))):
        value, interval, n = _figure_value(figure)
        if value is None:
            continue  # not available on this row: EEE takes numbers only, so no item (never a 0)
        uncertainty: dict[str, Any] = {"num_samples": n}
        if interval:
            uncertainty["confidence_interval"] = {"lower": interval["low"], "upper": interval["high"],
                                                  "confidence_level": interval["level"],
                                                  "method": "percentile bootstrap"}
            uncertainty["num_bootstrap_samples"] = interval["resamples"]
        items.append({
            "evaluation_result_id": f"{mode}/{metric}",
            "evaluation_name": f"{benchmark.slug}/{mode}",
            "source_data": source,
            "metric_config": {"evaluation_description": f"{label}, {mode} mode", "metric_id": metric,
                              "metric_name": label, "lower_is_better": False, "score_type": "continuous",
                              "min_score": 0.0, "max_score": 1.0},
            "score_details": {"score": value, "uncertainty": uncertainty,
                              **({"details": _details(figures)} if metric == "accuracy" else {})},
            "generation_config": generation,
        })
    return items


def _wanted_lines(submission: Submission, keys: set[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        with submission.file.open("rb") as stream:
            for obj in iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES):
                if isinstance(obj, dict):
                    key = (str(obj.get("sample_id")), str(obj.get("mode")))
                    if key in keys:
                        found[key] = obj
    except (FileNotFoundError, ValueError):
        pass  # the instances then carry what the stored results hold
    return found


def _instances(submission: Submission, *, evaluation_id: str, model_id: str, include_test: bool,  # noqa: ANN202
               left_out: list[str]):
    """The instances of the decided rows; each undecided row's ``mode/sample`` goes to ``left_out``."""
    rows = (PredictionResult.objects.filter(submission=submission).select_related("sample")
            .prefetch_related("sample__media").order_by("sample__uid", "mode"))
    if not include_test:
        rows = rows.filter(sample__split=Split.DEV)
    rows = list(rows)
    lines = _wanted_lines(submission, {(r.sample.uid, r.mode) for r in rows})
    for row in rows:
        if row.decided_by == UNDECIDED:
            left_out.append(f"{row.mode}/{row.sample.uid}")
            continue
        yield instance(submission, row, lines.get((row.sample.uid, row.mode), {}), evaluation_id=evaluation_id,
                       model_id=model_id)


def _hash(sample: Sample) -> str:
    return hashlib.sha256(json.dumps([sample.question, sample.options, sample.image_sha256]).encode()).hexdigest()


def _outputs(calls: list[dict[str, Any]], *, media: int) -> dict[int, str]:
    """Each call's output reference: as written, else the next free one (``img<highest + 1>``), as the tool
    runner names an omitted output (docs/formats.md)."""
    highest = media - 1
    out: dict[int, str] = {}
    for tool in calls:
        ref = tool.get("output")
        if not (isinstance(ref, str) and re.fullmatch(r"img\d+", ref)):
            ref = f"img{highest + 1}"
        highest = max(highest, int(ref[3:]))
        out[id(tool)] = ref
    return out


def _turns(steps: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The assistant's turns: a call without a thought after a call belongs to the same reply (our harness
    writes a reply's thought on its first call)."""
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for step in steps:
        tool = step.get("tool") if isinstance(step.get("tool"), dict) else None
        if tool is not None and turns and turns[-1][1] and not step.get("thought"):
            turns[-1][1].append(tool)
        else:
            turns.append((str(step.get("thought") or ""), [tool] if tool else []))
    return turns


def instance(submission: Submission, row: PredictionResult, line: dict[str, Any], *, evaluation_id: str,
             model_id: str) -> dict[str, Any]:
    sample = row.sample
    dev = sample.split == Split.DEV
    public = submission.is_public and dev  # our media and re-run images are served for these only
    n_media = max(1, len(sample.media.all()))  # prefetched; a sample built by hand has its image only
    base = f"{settings.SITE_URL}/b/{submission.benchmark.slug}/m/{submission.pk}/s/{sample.uid}"
    steps = [s for s in line.get("steps") or [] if isinstance(s, dict)]
    response = line.get("response") if isinstance(line.get("response"), str) else None
    metadata: dict[str, Any] = {"mode": row.mode, "split": sample.split, "decided_by": row.decided_by,
                                "failure_class": line.get("failure"), "cost_usd": row.cost_usd,
                                "kcov": row.kcov, "step_score": row.step_score, "grounding_iou": row.iou,
                                "calls": [{"name": c.get("name"), "valid": c.get("valid")} for c in row.calls] or None}
    if public:
        metadata["media"] = [f"{base}/media/{m}/still" for m in range(n_media)]
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model_id,
        "evaluation_name": f"{submission.benchmark.slug}/{row.mode}", "evaluation_result_id": f"{row.mode}/accuracy",
        "sample_id": sample.uid, "sample_hash": _hash(sample),
        "input": {"raw": sample.question, "reference": [sample.answer] if dev else [],
                  "choices": [f"{k}. {v}" for k, v in sorted(sample.options.items())] if sample.options else None},
    }
    turns = _turns(steps)
    calls = [tool for _thought, tools in turns for tool in tools]
    outputs = _outputs(calls, media=n_media)
    if calls or len(turns) > 1:
        messages: list[dict[str, Any]] = [{"turn_idx": 0, "role": "user", "content": sample.question}]
        for t, (thought, tools) in enumerate(turns, start=1):
            ids = [f"call_{t}_{k}" for k in range(len(tools))]
            messages.append({"turn_idx": t, "role": "assistant", "content": thought or None,
                             "tool_calls": [{"id": i, "name": str(tool.get("name")),
                                             "arguments": _strings(tool.get("args") or {}) | _strings(
                                                 {"image": tool.get("input")})} for i, tool in zip(ids, tools,
                                                                                                    strict=True)] or None})
            for i, tool in zip(ids, tools, strict=True):
                made = outputs[id(tool)] if not tool.get("error") else None
                if public and made:
                    metadata[f"tool_image.{made}"] = f"{base}/{row.mode}/{made}.png"
                messages.append({"turn_idx": t, "role": "tool", "tool_call_id": [i],
                                 "content": f"error: {tool['error']}" if tool.get("error") else f"made {made}"})
        if response and response != (turns[-1][0] if turns else None):
            messages.append({"turn_idx": len(turns) + 1, "role": "assistant", "content": response})
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        out.update(interaction_type="agentic", output=None, messages=messages)
        source, turn = f"messages[{last}].content", messages[last]["turn_idx"]
    else:
        raw = response if response is not None else (line.get("answer") or (turns[0][0] if turns else "") or "")
        out.update(interaction_type="single_turn", output={"raw": [raw]}, messages=None)
        source, turn = "output.raw[0]", 1
    out["answer_attribution"] = [{"turn_idx": turn, "source": source, "extracted_value": row.extracted,
                                  "extraction_method": (line.get("run") or {}).get("answer_extraction")
                                  or "platform scorer", "is_terminal": True}]
    out["evaluation"] = {"score": 1.0 if row.correct else 0.0, "is_correct": row.correct,
                         "num_turns": line.get("turns") if isinstance(line.get("turns"), int) else len(turns) or None,
                         "tool_calls_count": row.n_calls}
    usage = line.get("usage") if isinstance(line.get("usage"), dict) else {}
    if isinstance(usage.get("input_tokens"), int) and isinstance(usage.get("output_tokens"), int):
        out["token_usage"] = {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
                              "total_tokens": usage["input_tokens"] + usage["output_tokens"]}
    else:
        out["token_usage"] = None  # EEE wants all three or none
    out["performance"] = {"latency_ms": row.latency_ms} if row.latency_ms is not None else None
    failure = line.get("failure")
    out["error"] = f"{failure}: {line.get('failure_detail') or ''}".strip(": ") if failure else None
    out["metadata"] = _strings(metadata)
    return out
