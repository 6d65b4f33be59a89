from django.urls import path

from annotation import views

app_name = "annotation"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("next/<slug:slug>/", views.claim_next, name="claim_next"),
    path("a/<int:pk>/", views.item, name="item"),
    path("a/<int:pk>/save/", views.save, name="save"),
    path("a/<int:pk>/skip/", views.skip, name="skip"),
    path("a/<int:pk>/run-chain/", views.run_chain, name="run_chain"),
    path("a/<int:pk>/verify-chain/", views.verify_chain, name="verify_chain"),
    path("a/<int:pk>/draft-steps/", views.draft_steps, name="draft_steps"),
    path("a/<int:pk>/history/", views.history, name="history"),
    path("a/<int:pk>/restore/<int:revision_pk>/", views.restore, name="restore"),
    path("drafts/<int:pk>/", views.draft_status, name="draft_status"),
    path("samples/<int:pk>/image.png", views.preview_png, name="preview"),
    path("samples/<int:pk>/media/<int:position>/<str:part>", views.medium, name="medium"),
    path("review/<slug:slug>/", views.review_list, name="review_list"),
    path("review/<slug:slug>/export.zip", views.export_zip, name="export_zip"),
    path("review/<slug:slug>/coco.json", views.export_coco, name="export_coco"),
    path("review/sample/<int:pk>/", views.review_sample, name="review_sample"),
]
