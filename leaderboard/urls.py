from django.urls import path

from leaderboard import downloads, protocol, views, views_model

app_name = "leaderboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("b/<slug:slug>/leaderboard.csv", views.export, {"fmt": "csv"}, name="export_csv"),
    path("b/<slug:slug>/leaderboard.csv-metadata.json", views.export_csv_metadata, name="export_csv_metadata"),
    path("b/<slug:slug>/leaderboard.json", views.export, {"fmt": "json"}, name="export_json"),
    path("b/<slug:slug>/", views.board, name="board"),
    path("b/<slug:slug>/data/", downloads.data_page, name="data"),
    path("b/<slug:slug>/protocol/", protocol.protocol_page, name="protocol"),
    path("b/<slug:slug>/example-predictions.jsonl", protocol.example_predictions, name="example_predictions"),
    path("b/<slug:slug>/data/<slug:split>.<slug:kind>", downloads.data_file, name="data_file"),
    path("b/<slug:slug>/compare/", views_model.compare, name="compare"),
    path("b/<slug:slug>/compare/<int:a>/<int:b>/s/<str:uid>/", views_model.compare_sample, name="compare_sample"),
    path("b/<slug:slug>/m/<int:pk>/", views_model.model_page_view, name="model"),
    path("b/<slug:slug>/m/<int:pk>/agentx/", views_model.agentx_tasks, name="agentx_tasks"),
    path("b/<slug:slug>/m/<int:pk>/records.jsonl", views_model.records, name="records"),
    path("b/<slug:slug>/m/<int:pk>/eee.zip", views_model.eee_export, name="eee"),
    path("b/<slug:slug>/m/<int:pk>/eval_results.zip", views_model.hf_eval_results, name="hf_eval_results"),
    path("b/<slug:slug>/m/<int:pk>/s/<str:uid>/", views_model.sample, name="sample"),
    path("b/<slug:slug>/m/<int:pk>/s/<str:uid>/media/<int:position>/<str:part>", views_model.sample_medium,
         name="sample_medium"),
    path("b/<slug:slug>/m/<int:pk>/s/<str:uid>/<str:mode>/<str:ref>.png", views_model.sample_image,
         name="sample_image"),
    path("b/<slug:slug>/<slug:tab>/", views.board, name="tab"),
]
