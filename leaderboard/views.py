from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard.selectors import home_benchmarks


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "leaderboard/home.html", {"benchmarks": home_benchmarks()})
