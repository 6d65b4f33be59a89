from django.apps import AppConfig


class RoutersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "routers"
    verbose_name = "Routers (VL-RouterBench's track)"
