"""The model page, its dev-sample browser (with tool calls re-run on the image), and the compare page."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils import timezone
from django.views.decorators.http import require_GET

from annotation.imagetools import ToolError
from annotation.media import media_for_page, media_part
from annotation.models import Sample, Split
from annotation.workbench.access import sees_gold, sees_test_gold
from evaluation.selectors import submission_visible_to
from evaluation.metrics.types import MODES as RESULT_MODES
from evaluation.provenance import file_claim, mismatch_text, run_facts
from evaluation.run_protocol import protocol_page
from evaluation.records import export_lines
from evaluation.models import Submission
from evaluation.metrics.tool_effect import outputs_shown
from leaderboard.author_figures_view import author_figures
from leaderboard import agentx_tab, cache, chain_runs, eee, flipped, hf_results, model_page, selectors, tools_tab

def _benchmark(slug: str):  # noqa: ANN202
    benchmark = cache.benchmark_for_page(slug)
    if benchmark is None:
        raise Http404("No such benchmark")
    return benchmark


def _submission(benchmark: Any, pk: int) -> Submission:
    submission = model_page.public_submission(benchmark, pk)
    if submission is None:
        raise Http404("No public submission with this number on this benchmark")
    return submission


@require_GET
def model_page_view(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    benchmark = _benchmark(slug)
    submission = _submission(benchmark, pk)
    results = submission.results or {}
    modes, metrics = model_page.metric_rows(results)
    ms = results.get("mode_selection")
    samples = model_page.dev_samples(submission)
    # ?tools=wr-called: the samples of one cell of the Tools section's 2 x 2 table (tools_tab.sample_cells)
    tools_filter = request.GET.get("tools", "")
    if tools_filter[:2] in tools_tab.CELLS and tools_filter[3:] in ("called", "none"):
        cells = tools_tab.sample_cells(submission.pk)
        samples = [s for s in samples if cells.get(s["uid"]) == tools_filter]
        tools_filter = tools_tab.filter_label(tools_filter)
    else:
        tools_filter = ""
    context = {
        "benchmark": benchmark, "submission": submission, "modes": modes, "metrics": metrics,
        "mode_selection": ms, "mcc": model_page.Fig(ms["mcc"], (ms.get("interval") or {}).get("low"),
                                                    (ms.get("interval") or {}).get("high"),
                                                    reason=ms.get("reason")) if ms else None,
        "tools": tools_tab.model_tools(results.get("tool_effect"), dict(selectors.domains_of(benchmark))),
        "standings": model_page.standing_rows(benchmark, submission),
        "categories": model_page.category_rows(benchmark, results, modes),
        "breakdown": model_page.error_breakdown(submission),
        "samples": samples,
        "tools_filter": tools_filter,
        "others": Submission.objects.on_board().filter(benchmark=benchmark).exclude(pk=pk).only("pk", "model_name")
        .order_by("model_name"),
        "agentx": agentx_tab.model_figures(benchmark, submission),
        "author_figures": author_figures(results),
        "provenance": {"facts": run_facts(submission.run_record), "mismatch": mismatch_text(submission.run_record),
                       "claim": file_claim(results, protocol_page(benchmark))},
    }
    return render(request, "leaderboard/model.html", context)


@require_GET
def agentx_tasks(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """A submission's Agent-X figures per task: a public submission's for anyone, a private one's for
    its owner and staff (others: 404); test-split tasks only for those who see test gold."""
    benchmark = _benchmark(slug)
    if not agentx_tab.shows_agentx(benchmark):
        raise Http404("This benchmark has no Agent-X figures")
    submission = model_page.public_submission(benchmark, pk)
    if submission is None:
        own = submission_visible_to(user=request.user, submission_id=pk)
        if own is None or own.benchmark_id != benchmark.pk or not own.results:
            raise Http404("No submission with this number on this benchmark")
        submission = own
    context = {"benchmark": benchmark, "submission": submission,
               **agentx_tab.per_task(submission, sees_test=sees_test_gold(request.user, benchmark))}
    response = render(request, "leaderboard/agentx_tasks.html", context)
    patch_vary_headers(response, ("Cookie",))
    return response


def row_for_export(request: HttpRequest, benchmark: Any, pk: int) -> tuple[Submission, bool]:
    """The row a per-sample export may show this reader, and whether it may show the test split: a public
    submission's dev split for anyone; every split for its owner and staff (a private one: theirs only,
    others 404). docs/security.md, "a row's records export"."""
    submission = model_page.public_submission(benchmark, pk)
    own = submission_visible_to(user=request.user, submission_id=pk)
    if own is not None and (own.benchmark_id != benchmark.pk or own.status != "done" or not own.results):
        own = None
    if submission is None and own is None:
        raise Http404("No submission with this number on this benchmark")
    chosen = own or submission
    assert chosen is not None
    return chosen, own is not None


@require_GET
def records(request: HttpRequest, slug: str, pk: int) -> StreamingHttpResponse:
    """The row's canonical per-sample records (docs/runs.md, "The verified tier"): a public submission's
    dev-split records for anyone, every record for its owner and staff; a private submission's for its
    owner and staff only (others: 404). Test-split records are per-sample correctness: never public."""
    benchmark = _benchmark(slug)
    chosen, include_test = row_for_export(request, benchmark, pk)
    response = StreamingHttpResponse(export_lines(chosen, include_test=include_test),
                                     content_type="application/x-ndjson; charset=utf-8")
    scope = "all" if include_test else "dev"
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-{pk}-records-{scope}.jsonl"'
    response["Cache-Control"] = "private, no-store"
    patch_vary_headers(response, ("Cookie",))
    return response


def _steps(line: dict[str, Any], result: Any, key_steps: list[str], run: chain_runs.ChainRun) -> dict[str, Any]:
    """The prediction's steps, each with its call's verdict and, where the chain ran, its output image."""
    steps = [s for s in (line.get("steps") or []) if isinstance(s, dict)]
    ran = run.steps
    error = run.error if chain_runs.calls_of(line) else None
    verdicts = list(result.calls) if result else []
    scores = list(result.step_scores or []) if result else []
    # The calls whose image the model was never sent, where the line records it (docs/metrics.md section 15).
    seen = outputs_shown(line.get("steps"), line.get("run"))
    hidden = set(seen[2]) if seen is not None else set()
    out = []
    call_index = 0
    for i, step in enumerate(steps):
        item: dict[str, Any] = {"n": i + 1, "thought": step.get("thought", ""), "score": scores[i] if i < len(scores) else None}
        if isinstance(step.get("tool"), dict):
            tool = step["tool"]
            item["tool"] = {"name": tool.get("name"), "args": tool.get("args"), "input": tool.get("input") or "",
                            "output": tool.get("output") or "", "never_shown": tool.get("output") in hidden}
            item["verdict"] = verdicts[call_index] if call_index < len(verdicts) else None
            if call_index < len(ran):
                item["run"] = ran[call_index]
            call_index += 1
        out.append(item)
    matched = list(result.key_steps or []) if result else []
    return {"steps": out, "chain_error": error,
            "key_steps": [(k, matched[i] if i < len(matched) else None) for i, k in enumerate(key_steps)]}


def _browsable(request: HttpRequest, benchmark: Any, uid: str, *submissions: Submission) -> Sample:
    """The sample, if this visitor may browse it with these submissions: dev for anyone, every split for staff
    and the owner of them all (test-split correctness is theirs alone: docs/security.md)."""
    every = flipped.sees_every_sample(request.user, submissions[0], submissions[-1])
    item = model_page.browsable_sample(benchmark, uid, every_split=every)
    if item is None:
        raise Http404("Only dev-split samples can be browsed")
    return item


def _trace(request: HttpRequest, submission: Submission, item: Sample, modes: tuple[str, ...] = RESULT_MODES
           ) -> list[dict[str, Any]]:
    """One submission's trace on one sample per mode: the line, the verdicts, the steps with their re-run images
    (key steps are gold: shown only to who sees the sample's gold)."""
    lines = chain_runs.prediction_lines(submission, item)
    results = {r.mode: r for r in model_page.sample_results(submission, item)}
    key_steps = model_page.sample_key_steps(item) if sees_gold(request.user, item) else []
    out = []
    for mode in modes:  # blind included: a blind line has no calls, so no images to re-run
        if mode not in lines and mode not in results:
            continue
        detail = _steps(lines.get(mode, {}), results.get(mode), key_steps, chain_runs.chain_run(submission, item, mode))
        out.append({"mode": mode, "line": lines.get(mode, {}), "result": results.get(mode), **detail})
    return out


def _media(benchmark: Any, submission: Submission, item: Sample) -> dict[str, Any]:
    media = media_for_page(item, lambda position, part: reverse(
        "leaderboard:sample_medium", args=[benchmark.slug, submission.pk, item.uid, position, part]))
    return {"media": media, "several_media": len(media) > 1 or media[0]["kind"] == "video"}


def _private_if_test(response: HttpResponse, item: Sample) -> HttpResponse:
    """A dev sample's image is public and cached by anyone; a test sample's is for the signed-in few."""
    if item.split == Split.DEV:
        response["Cache-Control"] = "public, max-age=3600"
    else:
        response["Cache-Control"] = "private, max-age=3600"
        patch_vary_headers(response, ("Cookie",))
    return response


@require_GET
def sample(request: HttpRequest, slug: str, pk: int, uid: str) -> HttpResponse:
    benchmark = _benchmark(slug)
    submission = _submission(benchmark, pk)
    item = _browsable(request, benchmark, uid, submission)
    context = {"benchmark": benchmark, "submission": submission, "sample": item,
               "modes": _trace(request, submission, item), "show_gold": sees_gold(request.user, item),
               **_media(benchmark, submission, item)}
    if not request.htmx:  # the page's own previous / next (the model page's panel has its list)
        every = flipped.sees_every_sample(request.user, submission, submission)
        context["previous_uid"], context["next_uid"] = model_page.sample_neighbours(item, every_split=every)
    template = "leaderboard/_sample.html" if request.htmx else "leaderboard/sample.html"
    response = render(request, template, context)
    patch_vary_headers(response, ["HX-Request", "Cookie"])
    return response


@require_GET
def sample_image(request: HttpRequest, slug: str, pk: int, uid: str, mode: str, ref: str) -> HttpResponse:
    """An image of the re-run chain (img0 is the sample itself); dev-split samples (every split: ``_browsable``).

    Open to anyone, so a name the chain cannot produce is a 404 before anything runs, and a run is
    made once per (submission, sample, mode) and cached with all its images (chain_runs).
    """
    benchmark = _benchmark(slug)
    submission = _submission(benchmark, pk)
    item = _browsable(request, benchmark, uid, submission)
    if not chain_runs.may_show(submission, item, mode, ref):
        raise Http404("This chain makes no image of that name")
    png = chain_runs.chain_run(submission, item, mode).pngs.get(ref)
    if png is None:
        raise Http404("This call produced no image")
    return _private_if_test(HttpResponse(png, content_type="image/png"), item)


@require_GET
def sample_medium(request: HttpRequest, slug: str, pk: int, uid: str, position: int, part: str) -> HttpResponse:
    """A part of a browsable sample's medium img<position>: its still, a video's frame, the video."""
    benchmark = _benchmark(slug)
    submission = _submission(benchmark, pk)
    item = _browsable(request, benchmark, uid, submission)
    try:
        body, content_type = media_part(item, position, part)
    except LookupError as error:
        raise Http404(str(error)) from None
    except (ToolError, OSError):
        return HttpResponse("This medium's stored file cannot be read.", status=422, content_type="text/plain")
    return _private_if_test(HttpResponse(body, content_type=content_type), item)


def _int(value: str | None, default: int = 0) -> int:
    try:
        return int(value or "")
    except ValueError:
        return default


@require_GET
def compare(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = _benchmark(slug)
    choices = list(Submission.objects.on_board().filter(benchmark=benchmark).only("pk", "model_name", "is_demo")
                   .order_by("model_name", "pk"))
    context: dict[str, Any] = {"benchmark": benchmark, "choices": choices,
                               "defaults": model_page.compare_defaults(benchmark)}
    a_id, b_id = _int(request.GET.get("a")), _int(request.GET.get("b"))
    if a_id and b_id:
        a, b = _submission(benchmark, a_id), _submission(benchmark, b_id)
        found = model_page.compare(benchmark, a, b)
        context.update(a=a, b=b, **(found or {"updating": True}))
        if found:
            context["tools_test"] = tools_tab.compare_tools(a, b)
            context["flipped"] = flipped.flipped(
                benchmark, a, b, mode=request.GET.get("mode", ""), domain=request.GET.get("domain", ""),
                cell=request.GET.get("cell", ""), page=_int(request.GET.get("page"), 1),
                every_split=flipped.sees_every_sample(request.user, a, b))
    response = render(request, "leaderboard/compare.html", context)
    patch_vary_headers(response, ("Cookie",))
    return response


@require_GET
def compare_sample(request: HttpRequest, slug: str, a: int, b: int, uid: str) -> HttpResponse:
    """One sample's two traces side by side (the steps, the re-run tool images, the verdicts), per mode."""
    benchmark = _benchmark(slug)
    sub_a, sub_b = _submission(benchmark, a), _submission(benchmark, b)
    item = _browsable(request, benchmark, uid, sub_a, sub_b)
    mode = request.GET.get("mode", "")
    modes = (mode,) if mode in RESULT_MODES else RESULT_MODES
    traces_a, traces_b = _trace(request, sub_a, item, modes), _trace(request, sub_b, item, modes)
    by_mode_b = {t["mode"]: t for t in traces_b}
    pairs = [{"mode": t["mode"], "a": t, "b": by_mode_b.get(t["mode"])} for t in traces_a]
    pairs += [{"mode": t["mode"], "a": None, "b": t} for t in traces_b if t["mode"] not in {p["mode"] for p in pairs}]
    context = {"benchmark": benchmark, "a": sub_a, "b": sub_b, "sample": item, "pairs": pairs, "mode": mode,
               "show_gold": sees_gold(request.user, item), "submission": sub_a, **_media(benchmark, sub_a, item)}
    response = render(request, "leaderboard/compare_sample.html", context)
    patch_vary_headers(response, ("Cookie",))
    return response


@require_GET
def eee_export(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The row as Every Eval Ever records (docs/interop.md): the aggregate JSON and the instances of the
    samples this reader may see (``row_for_export``), zipped in EEE's layout."""
    benchmark = _benchmark(slug)
    chosen, include_test = row_for_export(request, benchmark, pk)
    body = eee.build(chosen, include_test=include_test, now=timezone.now()).zip_bytes()
    response = HttpResponse(body, content_type="application/zip")
    scope = "all" if include_test else "dev"
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-{pk}-eee-{scope}.zip"'
    response["Cache-Control"] = "private, no-store"
    patch_vary_headers(response, ("Cookie",))
    return response


@require_GET
def hf_eval_results(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The row's headline figures as Hugging Face .eval_results entries (docs/interop.md); 404 with the
    reason when the benchmark names no Hub dataset."""
    benchmark = _benchmark(slug)
    chosen, _ = row_for_export(request, benchmark, pk)
    try:
        body = hf_results.zip_bytes(chosen)
    except hf_results.NotOnTheHub as exc:
        raise Http404(str(exc)) from None
    response = HttpResponse(body, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-{pk}-eval_results.zip"'
    response["Cache-Control"] = "private, no-store"
    patch_vary_headers(response, ("Cookie",))
    return response

