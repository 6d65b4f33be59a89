from django.urls import path

from evaluation import api

urlpatterns = [
    path("benchmarks/<slug:slug>/submissions/", api.SubmissionCreateApi.as_view(), name="api-submission-create"),
    path("submissions/", api.SubmissionListApi.as_view(), name="api-submission-list"),
    path("submissions/<int:pk>/", api.SubmissionDetailApi.as_view(), name="api-submission-detail"),
    path("submissions/<int:pk>/predictions/", api.SubmissionPredictionsApi.as_view(),
         name="api-submission-predictions"),
]
