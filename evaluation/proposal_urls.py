from django.urls import path

from evaluation import views_proposals

app_name = "proposals"
urlpatterns = [
    path("<slug:slug>/", views_proposals.proposal_runs_page, name="runs"),
    path("<slug:slug>/quality/", views_proposals.proposal_quality_page, name="quality"),
    path("<slug:slug>/quality.csv", views_proposals.proposal_quality_page, {"fmt": "csv"}, name="quality_csv"),
    path("<slug:slug>/quality.json", views_proposals.proposal_quality_page, {"fmt": "json"}, name="quality_json"),
    path("<slug:slug>/<int:pk>/", views_proposals.proposal_run_page, name="detail"),
    path("<slug:slug>/<int:pk>/cancel/", views_proposals.proposal_run_cancel, name="cancel"),
]
