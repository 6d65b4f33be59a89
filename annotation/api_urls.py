from django.urls import path

from annotation import api

urlpatterns = [
    path("tools/", api.ToolListApi.as_view(), name="tools"),
]
