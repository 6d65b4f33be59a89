from django.urls import path

from evaluation import api, api_runs

urlpatterns = [
    path("benchmarks/<slug:slug>/submissions/", api.SubmissionCreateApi.as_view(), name="api-submission-create"),
    path("submissions/", api.SubmissionListApi.as_view(), name="api-submission-list"),
    path("submissions/<int:pk>/", api.SubmissionDetailApi.as_view(), name="api-submission-detail"),
    path("submissions/<int:pk>/predictions/", api.SubmissionPredictionsApi.as_view(),
         name="api-submission-predictions"),
    path("benchmarks/<slug:slug>/runs/", api_runs.RunCreateApi.as_view(), name="api-run-create"),
    path("runs/", api_runs.RunListApi.as_view(), name="api-run-list"),
    path("runs/<int:pk>/", api_runs.RunDetailApi.as_view(), name="api-run-detail"),
    path("runs/<int:pk>/cancel/", api_runs.RunCancelApi.as_view(), name="api-run-cancel"),
]
