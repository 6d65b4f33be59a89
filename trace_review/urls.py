from django.urls import path

from trace_review import views, views_agreement

app_name = "trace_review"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("batches/new/", views.batch_create, name="batch_create"),
    path("batches/<int:pk>/", views.batch_detail, name="batch"),
    path("batches/<int:pk>/next/", views.claim_next, name="next"),
    path("a/<int:pk>/", views.review, name="review"),
    path("a/<int:pk>/skip/", views.skip, name="skip"),
    path("a/<int:pk>/frame.png", views.frame_png, name="frame"),
    path("a/<int:pk>/media/<int:position>/<str:part>", views.medium, name="medium"),
    path("a/<int:pk>/img/<str:ref>.png", views.chain_png, name="image"),
    path("agreement/", views_agreement.agreement, name="agreement"),
    path("agreement/s/<int:pk>/", views_agreement.agreement_for_submission, name="agreement_for_submission"),
    path("agreement/stability/", views_agreement.stability_start, name="stability_start"),
    path("verdicts.jsonl", views_agreement.export, name="export"),
    path("verified/<int:pk>/", views_agreement.verified, name="verified"),
]
