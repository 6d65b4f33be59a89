"""What Agent-X's six judged figures add to a judged scoring run: the Agent-X demo benchmark
(fixtures/releases, imported as `load_demo` does) and its simulated submissions in Agent-X's
output shape, scored in this process with the remote judge pointed at bench_judge's local
OpenAI-compatible server (fixed, well-formed verdicts after --latency seconds). Prints, per
submission, the wall time, the requests and questions the server answered, and the estimate of the
Agent-X questions alone (the estimate with the figure set minus without it: questions, requests,
input tokens, and tokens per task, the figure to scale by for the 828-task release); then
re-scores one submission (every verdict cached: no request).

    .venv/bin/python bench/bench_agentx_judge.py                 # SQLite in a temp dir, 0.2 s a request
    .venv/bin/python bench/bench_agentx_judge.py --latency 1.0
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    opts = ap.parse_args()
    from bench_judge import JudgeServer

    server = JudgeServer(opts.latency)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ.update({"JUDGE_OPENAI_BASE_URL": server.url, "JUDGE_OPENAI_API_KEY": "bench",
                       "JUDGE_OPENAI_MODEL": "bench-judge"})
    import bench_pipeline  # noqa: F401 - sets Django up (a temp VAR_DIR, SQLite unless DATABASE_URL)
    from django.core.management import call_command
    from django.db import connection

    from annotation.demo import demo_accounts_ensure, demo_releases_load
    from annotation.models import Benchmark
    from evaluation import pipeline, services
    from evaluation.demo import demo_release_submissions_load
    from evaluation.judge_estimate import judge_estimate
    from evaluation.judges.openai_judge import OpenAIJudge
    from evaluation.models import Submission

    call_command("migrate", verbosity=0)
    if connection.vendor != "sqlite":
        call_command("flush", interactive=False, verbosity=0)
    demo_accounts_ensure()
    demo_releases_load()
    slug = "agent-x-demo"
    t0 = time.perf_counter()
    req0, q0 = server.counts()
    subs = demo_release_submissions_load(slug=slug)
    took = time.perf_counter() - t0
    req1, q1 = server.counts()
    n_tasks = Benchmark.objects.get(slug=slug).samples.count()
    print(f"database {connection.vendor}; judge latency {opts.latency:g} s; {n_tasks} tasks; "
          f"{len(subs)} submissions scored in {took:.1f} s: {req1 - req0} requests, {q1 - q0} questions")
    judge = OpenAIJudge(model="bench-judge", base_url=server.url, api_key="bench")  # no cache: every question counts
    for sub in subs:
        sub = Submission.objects.select_related("benchmark").get(pk=sub.pk)
        assert sub.status == "done", sub.failure_reason
        assert "agentx_judged" in sub.results, "no judged Agent-X figures stored"
        with_figures = judge_estimate(submission=sub, judge=judge)
        sub.benchmark.figures = []
        without = judge_estimate(submission=sub, judge=judge)
        q, r = with_figures["questions"] - without["questions"], with_figures["requests"] - without["requests"]
        tokens = with_figures["input_tokens"] - without["input_tokens"]
        print(f"  {sub.model_name}: Agent-X questions {q} ({r} requests), {tokens:,} input tokens, "
              f"{tokens / n_tasks:,.0f} a task; all questions {with_figures['questions']}, "
              f"{with_figures['input_tokens']:,} input tokens")
    first = Submission.objects.get(pk=subs[0].pk)
    t0 = time.perf_counter()
    services.submission_rescore(submission=first, enqueue=False)
    again = pipeline.submission_process_sync(submission=Submission.objects.get(pk=first.pk))
    req2, _ = server.counts()
    print(f"re-scored {again.model_name}: {again.status} in {time.perf_counter() - t0:.1f} s, {req2 - req1} requests")


if __name__ == "__main__":
    main()
