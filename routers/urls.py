from django.urls import path

from routers import views

app_name = "routers"
urlpatterns = [
    path("b/<slug:slug>/routers/samples/<int:pk>/image", views.sample_image, name="sample_image"),
    path("b/<slug:slug>/routers/matrix/<str:split>.csv", views.matrix, {"fmt": "csv"}, name="matrix_csv"),
    path("b/<slug:slug>/routers/matrix/<str:split>.parquet", views.matrix, {"fmt": "parquet"}, name="matrix_parquet"),
    path("b/<slug:slug>/routers.json", views.board_export, {"fmt": "json"}, name="routers_json"),
    path("b/<slug:slug>/routers.csv", views.board_export, {"fmt": "csv"}, name="routers_csv"),
    path("b/<slug:slug>/routers.csv-metadata.json", views.board_csv_metadata, name="routers_csv_metadata"),
    path("b/<slug:slug>/routers/submit/", views.submit, name="submit"),
    path("b/<slug:slug>/routers/<int:pk>/", views.router_page, name="page"),
]
