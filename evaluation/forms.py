"""The web upload form (the same fields as the API's multipart upload) and the owner's edit form."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.selectors import scorable_benchmarks
from evaluation.converters import FORMAT_CHOICES
from evaluation.model_meta import (LICENSE_TOO_LONG, PARAMETERS_HELP, WEIGHTS_INVALID, parse_parameters,
                                   validate_http_url, validate_release_date)
from evaluation.metrics.types import MODES
from evaluation.models import FULL_PIPELINE_HELP, Weights


class ParametersField(forms.Field):
    """A parameter count as people write it ("7B", "1.5b", "500M", or billions); cleaned to billions."""

    widget = forms.TextInput

    def to_python(self, value: Any) -> float | None:
        try:
            return parse_parameters(value)
        except ValueError as exc:
            raise forms.ValidationError(str(exc), code="parameters") from exc


class ModelDetailsForm(forms.Form):
    """The model's details: asked at upload, and editable by the owner afterwards without a re-score."""

    model_name = forms.CharField(max_length=200)
    organisation = forms.CharField(max_length=200, required=False)
    model_url = forms.URLField(max_length=500, required=False, assume_scheme="https", label="Code or model URL",
                               validators=[validate_http_url])
    paper_url = forms.URLField(max_length=500, required=False, assume_scheme="https", label="Paper URL",
                               validators=[validate_http_url])
    weights = forms.ChoiceField(choices=Weights.choices, required=False,
                                error_messages={"invalid_choice": WEIGHTS_INVALID.format("%(value)s")})
    parameters_billions = ParametersField(required=False, label="Parameters",
                                          help_text=PARAMETERS_HELP)
    license = forms.CharField(max_length=100, required=False, label="Licence",
                              error_messages={"max_length": LICENSE_TOO_LONG},
                              help_text='as the model card states it, e.g. "Apache-2.0" or "proprietary"')
    release_date = forms.DateField(required=False, label="Release date", validators=[validate_release_date],
                                   widget=forms.DateInput(attrs={"type": "date"}), help_text="YYYY-MM-DD")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)


class SubmissionForm(ModelDetailsForm):
    # Only benchmarks with samples: a results-only entry (a paper's figures) cannot score predictions.
    benchmark = forms.ModelChoiceField(queryset=scorable_benchmarks(), to_field_name="slug")
    file = forms.FileField(label="Prediction file", allow_empty_file=True)
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="jsonl", required=False, label="File format",
                               help_text="an author's format is converted on the way in; the upload is kept")
    price_input_per_mtok = forms.FloatField(required=False, min_value=0.0, label="Price per 1M input tokens (USD)")
    price_output_per_mtok = forms.FloatField(required=False, min_value=0.0,
                                             label="Price per 1M output tokens (USD)")
    # submit --full-pipeline and the API's full_pipeline: MMReason's, or VTC-Bench's and VLMEvalKit's with their judge
    full_pipeline = forms.BooleanField(required=False, label="The authors' full pipeline",
                                       help_text=FULL_PIPELINE_HELP,
                                       widget=forms.CheckboxInput(attrs={"aria-describedby": "id_full_pipeline_help"}))
    is_public = forms.BooleanField(required=False, label="Publish on the leaderboard once scored")
    field_order = ["benchmark", "file", "format", "model_name", "organisation", "model_url", "paper_url", "weights",
                   "parameters_billions", "license", "release_date", "price_input_per_mtok",
                   "price_output_per_mtok", "description", "full_pipeline", "is_public"]


class RunForm(forms.Form):
    """A hosted run (docs/runs.md, "Hosted runs"): the endpoint, the benchmark's split and modes, the
    row's details; the same fields as POST /api/v1/benchmarks/<slug>/runs/."""

    benchmark = forms.ModelChoiceField(queryset=scorable_benchmarks(), to_field_name="slug")
    endpoint = forms.CharField(max_length=500, label="Endpoint (base URL)",
                               widget=forms.URLInput(attrs={"placeholder": "https://api.example.org/v1"}),
                               help_text="an OpenAI-compatible chat-completions API (vLLM, Ollama, a provider)")
    model = forms.CharField(max_length=200, label="Model (as the endpoint names it)")
    api_key = forms.CharField(max_length=1000, required=False, label="API key",
                              widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
                              help_text="stored encrypted, never shown again, deleted when the run ends unless "
                                        "you keep the endpoint")
    modes = forms.MultipleChoiceField(choices=[(m, m) for m in MODES], initial=list(MODES),
                                      widget=forms.CheckboxSelectMultiple)
    split = forms.ChoiceField(choices=[("all", "all"), ("dev", "dev"), ("test", "test")], initial="all")
    model_name = forms.CharField(max_length=200, required=False, label="Name on the board",
                                 help_text="default: the model")
    organisation = forms.CharField(max_length=200, required=False)
    price_input_per_mtok = forms.FloatField(required=False, min_value=0.0, label="Price per 1M input tokens (USD)")
    price_output_per_mtok = forms.FloatField(required=False, min_value=0.0,
                                             label="Price per 1M output tokens (USD)")
    budget_usd = forms.FloatField(required=False, min_value=0.0, label="Budget (USD)",
                                  help_text="the run stops cleanly before spending more; empty: no limit")
    max_turns = forms.IntegerField(required=False, min_value=1, max_value=32, initial=8, label="Turns at most")
    concurrency = forms.IntegerField(required=False, min_value=1, max_value=64, initial=4,
                                     label="Requests in flight")
    protocol = forms.ChoiceField(choices=[("function_calling", "function calling"),
                                          ("tagged_text", "tagged text (<tool_call>)")], initial="function_calling")
    public = forms.BooleanField(required=False, label="Publish on the leaderboard when done")
    keep_endpoint = forms.BooleanField(required=False, label="Keep the endpoint and its key for later runs")
