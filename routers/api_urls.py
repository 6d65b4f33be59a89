from django.urls import path

from routers import api

urlpatterns = [
    # Before evaluation's route of the same path: kind=router goes to the router track, anything else to evaluation.
    path("benchmarks/<slug:slug>/submissions/", api.SubmissionOrRouterCreateApi.as_view(), name="api-submission-create"),
    path("benchmarks/<slug:slug>/routers/", api.RouterCreateApi.as_view(), name="api-router-create"),
    path("routers/<int:pk>/", api.RouterDetailApi.as_view(), name="api-router-detail"),
]
