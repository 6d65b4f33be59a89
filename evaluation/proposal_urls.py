from django.urls import path

from evaluation import views_proposals

app_name = "proposals"
urlpatterns = [
    path("<slug:slug>/", views_proposals.proposal_runs_page, name="runs"),
    path("<slug:slug>/<int:pk>/", views_proposals.proposal_run_page, name="detail"),
    path("<slug:slug>/<int:pk>/cancel/", views_proposals.proposal_run_cancel, name="cancel"),
]
