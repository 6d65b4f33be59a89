from django.urls import path

from leaderboard import api

urlpatterns = [
    path("benchmarks/", api.BenchmarkListApi.as_view(), name="api-benchmark-list"),
    path("benchmarks/<slug:slug>/", api.BenchmarkDetailApi.as_view(), name="api-benchmark-detail"),
    path("benchmarks/<slug:slug>/leaderboard/", api.LeaderboardApi.as_view(), name="api-benchmark-leaderboard"),
    path("benchmarks/<slug:slug>/downloads/", api.DownloadListApi.as_view(), name="api-benchmark-downloads"),
]
