from django.urls import path

from evaluation import views_runs

app_name = "runs"
urlpatterns = [
    path("", views_runs.run_list, name="list"),
    path("new/", views_runs.run_new, name="new"),
    path("<int:pk>/", views_runs.run_detail, name="detail"),
    path("<int:pk>/progress/", views_runs.run_detail, {"fragment": True}, name="progress"),
    path("<int:pk>/cancel/", views_runs.run_cancel, name="cancel"),
    path("<int:pk>/file/", views_runs.run_file, name="file"),
]
