"""The evaluation and annotation apps' modules import one another in one direction: no circle, not
even through an import inside a function (docs/architecture.md, "Directions"). Read from the
source, so it needs no database."""

from __future__ import annotations

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Every project module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    own = module_name(path) if path.is_relative_to(ROOT) else ""
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            # "from evaluation import pipeline" names the module evaluation.pipeline; "import
            # evaluation.metrics.scoring" reaches the closest module that exists.
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_graph(*packages: str) -> dict[str, set[str]]:
    """The imports among the modules of ``packages`` (evaluation by default), read as one graph."""
    files = [p for package in packages or ("evaluation",) for p in (ROOT / package).rglob("*.py")
             if "tests" not in p.parts and "migrations" not in p.parts]
    known = {module_name(p) for p in files}
    return {module_name(p): imports_of(p, known) - {module_name(p)} for p in files}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


APPS = ("annotation", "evaluation", "leaderboard", "routers", "trace_review", "config")


def test_the_modules_import_one_another_without_a_circle() -> None:
    """All six packages read as one graph: a circle through two apps counts as much as one inside an app."""
    graph = import_graph(*APPS)
    # A package's __init__ re-exporting its own modules is not a circle worth breaking.
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    assert cycles(graph) == []


def collapsed(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """The graph with ``package``'s modules read as one module named ``package``."""
    def name(m: str) -> str:
        return package if m.startswith(package + ".") else m
    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(name(m), set()).update(name(d) for d in deps)
    return {m: deps - {m} for m, deps in out.items()}


def test_the_pipeline_runs_one_way_tasks_then_pipeline_then_services() -> None:
    graph = collapsed(import_graph(), "evaluation.pipeline")
    assert {"evaluation.pipeline", "evaluation.services"} <= graph["evaluation.tasks"]
    assert "evaluation.services" in graph["evaluation.pipeline"]
    for lower in ("evaluation.pipeline", "evaluation.services", "evaluation.queueing"):
        assert "evaluation.tasks" not in graph[lower], f"{lower} imports the tasks"
    for lower in ("evaluation.services", "evaluation.queueing"):
        assert "evaluation.pipeline" not in graph[lower], f"{lower} imports the pipeline"


def test_config_imports_no_app() -> None:
    """config.celery finds tasks by name for the apps; the worker's warm-up lives in evaluation.tasks."""
    graph = import_graph("config", "evaluation")
    assert {"config.celery"} <= graph["evaluation.queueing"]
    assert not {d for d in graph["config.celery"] if not d.startswith("config")}


def test_annotation_tasks_call_the_llm_drafts_and_not_the_other_way() -> None:
    graph = import_graph("annotation")
    assert "annotation.workbench.llm" in graph["annotation.tasks"]
    assert "annotation.tasks" not in graph["annotation.workbench.llm"]


def test_the_checker_sees_an_import_inside_a_function(tmp_path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from evaluation import tasks\n    import evaluation.pipeline.x\n")
    assert imports_of(source, {"evaluation", "evaluation.tasks", "evaluation.pipeline"}) >= {
        "evaluation.tasks", "evaluation.pipeline"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_a_web_process_that_never_imported_the_tasks_can_still_send_them() -> None:
    """queueing finds tasks by name: in a fresh process (gunicorn's) the registry must load them."""
    import os
    import subprocess
    import sys

    code = ("import django, sys; django.setup(); from evaluation.queueing import stage_task; "
            "assert 'evaluation.tasks' not in sys.modules; print(stage_task('queued').name, stage_task('judging').name)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"})
    assert out.stdout.split() == ["evaluation.tasks.submission_validate", "evaluation.tasks.submission_score"], out.stderr


def test_the_apps_depend_one_way() -> None:
    """docs/architecture.md, "Directions": leaderboard -> routers -> evaluation -> annotation, trace_review ->
    evaluation; config imports no app. Read with each package as one module."""
    graph = import_graph(*APPS)
    for package in APPS:
        graph = collapsed(graph, package)
    below = {"annotation": set(), "evaluation": {"annotation"}, "routers": {"evaluation", "annotation"},
             "trace_review": {"evaluation", "annotation"},
             # load_demo, which reaches every layer, lives in the leaderboard (it loads trace review's demo too)
             "leaderboard": {"routers", "trace_review", "evaluation", "annotation"}, "config": set()}
    for package, allowed in below.items():
        assert graph.get(package, set()) - {"config"} <= allowed, (package, graph.get(package))
