from django.conf import settings
from django.conf.urls.static import static
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static as static_url
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config.login_throttle import ThrottledAdminAuthenticationForm, ThrottledLoginView

# The Swagger UI's files are static files of drf-spectacular-sidecar (SPECTACULAR_SETTINGS), and its
# start-up script is served by the view itself (the split view): the site's policy holds unchanged.
api_docs = SpectacularSwaggerSplitView.as_view(url_name="schema")


def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Pages of our own name the icon in base.html; the admin, the browsable API and feed readers ask
    for /favicon.ico, which would otherwise log a 404 on every visit."""
    return HttpResponseRedirect(static_url("favicon.svg"))


admin.site.login_form = ThrottledAdminAuthenticationForm  # the admin's sign-in is throttled like the site's

api_v1 = [
    path("", include("annotation.api_urls")),
    path("", include("routers.api_urls")),  # first: it takes kind=router uploads (docs/routers.md)
    path("", include("evaluation.api_urls")),
    path("", include("leaderboard.api_urls")),
]

urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", api_docs, name="api-docs"),
    path("annotate/", include("annotation.urls")),
    path("submissions/", include("evaluation.urls")),
    path("runs/proposals/", include("evaluation.proposal_urls")),
    path("runs/", include("evaluation.run_urls")),
    path("review/", include("trace_review.urls")),
    path("", include("routers.urls")),  # /b/<slug>/routers...: before the leaderboard's /b/<slug>/<tab>/
    path("", include("leaderboard.urls")),
]

if settings.DEBUG:
    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
