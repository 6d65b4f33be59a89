"""The web upload form (the same fields as the API's multipart upload) and the owner's edit form."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.selectors import scorable_benchmarks
from evaluation.converters import FORMAT_CHOICES
from evaluation.model_meta import (LICENSE_TOO_LONG, PARAMETERS_HELP, WEIGHTS_INVALID, parse_parameters,
                                   validate_http_url, validate_release_date)
from evaluation.models import Weights


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
    is_public = forms.BooleanField(required=False, label="Publish on the leaderboard once scored")
    field_order = ["benchmark", "file", "format", "model_name", "organisation", "model_url", "paper_url", "weights",
                   "parameters_billions", "license", "release_date", "price_input_per_mtok",
                   "price_output_per_mtok", "description", "is_public"]
