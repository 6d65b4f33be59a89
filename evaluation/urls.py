from django.urls import path

from evaluation import views

app_name = "evaluation"
urlpatterns = [
    path("", views.submission_list, name="list"),
    path("new/", views.submission_new, name="new"),
    path("health/", views.pipeline_health, name="health"),
    path("new/<slug:slug>/", views.submission_new, name="new_for"),
    path("<int:pk>/", views.submission_detail, name="detail"),
    path("<int:pk>/progress/", views.submission_detail, {"fragment": True}, name="progress"),
    path("<int:pk>/file/", views.submission_file, name="file"),
    path("<int:pk>/edit/", views.submission_edit, name="edit"),
    path("<int:pk>/publish/", views.submission_publish, name="publish"),
    path("<int:pk>/delete/", views.submission_delete, name="delete"),
]
