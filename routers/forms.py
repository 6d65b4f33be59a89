from __future__ import annotations

from django import forms


class RouterForm(forms.Form):
    name = forms.CharField(max_length=200, label="Router name")
    file = forms.FileField(label="Router file (JSON Lines: {\"sample_id\", \"model\"} per test sample)",
                           allow_empty_file=True)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    is_public = forms.BooleanField(required=False, label="Publish on the Routers tab once scored")
