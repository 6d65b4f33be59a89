from django.apps import AppConfig


class TraceReviewConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "trace_review"
    verbose_name = "Trace review"
