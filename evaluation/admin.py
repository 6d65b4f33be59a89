from django.contrib import admin

from .models import JudgeVerdict


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(admin.ModelAdmin):
    list_display = ("judge", "prompt_version", "input_hash", "created")
    list_filter = ("judge", "prompt_version")
    search_fields = ("input_hash",)
    readonly_fields = ("judge", "prompt_version", "input_hash", "verdict", "created")
