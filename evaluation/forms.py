"""The web upload form: the same fields as the API's multipart upload."""

from __future__ import annotations

from django import forms

from annotation.selectors import scorable_benchmarks
from evaluation.converters import FORMAT_CHOICES
from evaluation.models import Weights


class SubmissionForm(forms.Form):
    # Only benchmarks with samples: a results-only entry (a paper's figures) cannot score predictions.
    benchmark = forms.ModelChoiceField(queryset=scorable_benchmarks(), to_field_name="slug")
    file = forms.FileField(label="Prediction file", allow_empty_file=True)
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="jsonl", required=False, label="File format",
                               help_text="an author's format is converted on the way in; the upload is kept")
    model_name = forms.CharField(max_length=200)
    organisation = forms.CharField(max_length=200, required=False)
    model_url = forms.URLField(max_length=500, required=False, assume_scheme="https", label="Model URL")
    paper_url = forms.URLField(max_length=500, required=False, assume_scheme="https", label="Paper URL")
    weights = forms.ChoiceField(choices=Weights.choices, required=False)
    parameters_billions = forms.FloatField(required=False, min_value=0.0, label="Parameters (billions)")
    price_input_per_mtok = forms.FloatField(required=False, min_value=0.0, label="Price per 1M input tokens (USD)")
    price_output_per_mtok = forms.FloatField(required=False, min_value=0.0,
                                             label="Price per 1M output tokens (USD)")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    is_public = forms.BooleanField(required=False, label="Publish on the leaderboard once scored")
