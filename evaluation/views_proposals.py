"""Pages of proposal runs (evaluation/proposal_runs.py), for staff and a benchmark's admins: the benchmark's runs
with the form that starts one (its estimate shown before confirming), and one run's page (status, and each item's
proposal: the parts that passed validation, the errors of those that did not). Anyone else gets a 404."""

from __future__ import annotations

import csv
import re
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from config.csv_cells import csv_text_row
from annotation.models import Benchmark, Proposal, ProposalRun, Role
from annotation.workbench.access import roles_of
from evaluation import proposal_runs
from evaluation.proposal_quality import FIGURES, proposal_quality
from evaluation.run_inputs import SPLITS


class ProposalRunForm(forms.Form):
    endpoint = forms.URLField(max_length=500, assume_scheme="https",
                              help_text="The OpenAI-compatible base URL, e.g. https://api.example.com/v1")
    model = forms.CharField(max_length=200, help_text="The name the endpoint serves")
    api_key = forms.CharField(required=False, widget=forms.PasswordInput(render_value=True),
                              help_text="Stored encrypted, deleted when the run ends")
    split = forms.ChoiceField(choices=[(s, s) for s in SPLITS], initial="all")
    items = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                            help_text="Item ids, separated by spaces, commas or lines; empty: every item of the split")
    budget_usd = forms.FloatField(required=False, min_value=0, help_text="Stop when this is spent (0: no limit)")
    max_tokens = forms.IntegerField(required=False, min_value=64, max_value=8192)
    price_input_per_mtok = forms.FloatField(required=False, min_value=0, label="Price in ($ per million tokens)")
    price_output_per_mtok = forms.FloatField(required=False, min_value=0, label="Price out ($ per million tokens)")


def _admin_benchmark(request: HttpRequest, slug: str) -> Benchmark:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if not (request.user.is_staff or Role.ADMIN in roles_of(request.user, benchmark)):
        raise Http404
    return benchmark


def _arguments(data: dict[str, Any]) -> dict[str, Any]:
    return {"endpoint": data["endpoint"], "model": data["model"], "split": data["split"],
            "sample_uids": [u for u in re.split(r"[\s,]+", data.get("items") or "") if u],
            "details": {k: data[k] for k in ("price_input_per_mtok", "price_output_per_mtok") if data.get(k) is not None},
            "options": {k: data[k] for k in ("budget_usd", "max_tokens") if data.get(k) is not None}}


@login_required
def proposal_runs_page(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the runs and the form. POST: the estimate (nothing is sent); POST with confirm=1: the run."""
    benchmark = _admin_benchmark(request, slug)
    form = ProposalRunForm(request.POST or None)
    estimate = error = None
    if request.method == "POST" and form.is_valid():
        arguments = _arguments(form.cleaned_data)
        try:
            if request.POST.get("confirm") == "1":
                run = proposal_runs.proposal_run_create(benchmark=benchmark, owner=request.user,
                                                        api_key=form.cleaned_data.get("api_key") or "", **arguments)
                return redirect(reverse("proposals:detail", args=[benchmark.slug, run.pk]))
            estimate = proposal_runs.proposal_run_estimate(
                proposal_runs.proposal_run_unsaved(benchmark=benchmark, **arguments))
        except proposal_runs.ProposalRunRejected as exc:
            error = str(exc)
    runs = ProposalRun.objects.filter(benchmark=benchmark).select_related("owner")[:100]
    return render(request, "evaluation/proposal_runs.html",
                  {"benchmark": benchmark, "form": form, "estimate": estimate, "error": error, "runs": runs})


@login_required
def proposal_run_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    benchmark = _admin_benchmark(request, slug)
    run = get_object_or_404(ProposalRun, pk=pk, benchmark=benchmark)
    proposals = Proposal.objects.filter(run=run).select_related("sample").order_by("sample__position", "sample__uid")
    return render(request, "evaluation/proposal_run.html", {"benchmark": benchmark, "run": run, "proposals": proposals})


@login_required
@require_POST
def proposal_run_cancel(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    benchmark = _admin_benchmark(request, slug)
    run = proposal_runs.proposal_run_cancel(run=get_object_or_404(ProposalRun, pk=pk, benchmark=benchmark))
    return redirect(reverse("proposals:detail", args=[benchmark.slug, run.pk]))


@login_required
def proposal_quality_page(request: HttpRequest, slug: str, fmt: str = "") -> HttpResponse:
    """How good the benchmark's proposals were, per run and per model; ``fmt``: "csv" or "json" for the export."""
    benchmark = _admin_benchmark(request, slug)
    rows = proposal_quality(benchmark)
    if fmt == "json":
        return JsonResponse({"benchmark": benchmark.slug, "rows": [row.as_dict() for row in rows]})
    if fmt == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-proposal-quality.csv"'
        writer = csv.writer(response)
        writer.writerow(["label", "model", "runs", "items", "boxes_left_out_other_frame",
                         *[c for name, _ in FIGURES for c in (name, f"{name}_n", f"{name}_not_available")]])
        for row in rows:
            writer.writerow(csv_text_row([row.label, row.model, " ".join(map(str, row.runs)), row.items, row.frame_differs,
                             *[c for name, _ in FIGURES for c in (
                                 "" if row.figures[name].value is None else round(row.figures[name].value, 4),
                                 row.figures[name].n, row.figures[name].reason)]]))
        return response
    table = [{"row": row, "cells": [row.figures[name] for name, _ in FIGURES]} for row in rows]
    return render(request, "evaluation/proposal_quality.html",
                  {"benchmark": benchmark, "table": table, "headers": [title for _, title in FIGURES]})
