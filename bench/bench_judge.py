"""The LLM judge at a real submission's scale: a local OpenAI-compatible server that answers each
request after --latency seconds (default 1.0), a real worker process, and a synthetic
1,300-sample benchmark scored in two modes (text and adaptive; bench_scoring's generator,
about 4,500 judge questions). Prints the wall time POST -> done, the requests and the questions
the server answered, then re-scores the finished submission (every verdict cached: no request).

    .venv/bin/python bench/bench_judge.py                            # today's defaults (batch 20, 16 at a time)
    .venv/bin/python bench/bench_judge.py --batch 1 --concurrency 4  # one question per request, 4 at a time
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_scratch CELERY_BROKER_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/bench_judge.py                        # a SCRATCH PostgreSQL database: it is flushed

The server answers every question with a fixed, well-formed verdict (it is the transport and the
pipeline that are measured, not a model). Options: --samples N (1300), --latency S (1.0),
--batch N and --concurrency N (the worker's JUDGE_OPENAI_BATCH / JUDGE_OPENAI_CONCURRENCY;
unset: the settings' defaults).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


class JudgeServer(ThreadingHTTPServer):
    """POST /v1/chat/completions: after ``latency`` seconds, a verdict for every question of the
    request (a batch {"questions": [...]} or a single payload), counted."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, latency: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.latency = latency
        self.lock = threading.Lock()
        self.requests = 0
        self.questions = 0
        self.in_flight = 0
        self.peak_in_flight = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def counts(self) -> tuple[int, int]:
        with self.lock:
            return self.requests, self.questions


def _verdict(system: str, q: dict) -> dict:
    # Agent-X's judged kinds (bench_agentx_judge.py)
    if '"faithfulness"' in system:
        return {"faithfulness": 1, "factual_precision": 1, "semantic_accuracy": 1}
    if '"grounding"' in system:
        return {"grounding": [1] * len(q["pairs"]), "context": [1] * len(q["pairs"])}
    if '"tool_accuracy"' in system:
        return {"tool_accuracy": [1] * len(q["calls"])}
    if '"equivalent"' in system:
        return {"equivalent": False}
    if '"matched"' in system:
        return {"matched": [True] * len(q["key_steps"])}
    if '"scores"' in system:
        return {"scores": [1] * len(q["steps"])}
    return {"valid": True}


class _Handler(BaseHTTPRequestHandler):
    server: JudgeServer
    protocol_version = "HTTP/1.1"  # keep-alive, as a hosted API

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        srv = self.server
        with srv.lock:
            srv.in_flight += 1
            srv.peak_in_flight = max(srv.peak_in_flight, srv.in_flight)
        time.sleep(srv.latency)
        system = body["messages"][0]["content"]
        user = json.loads(body["messages"][1]["content"])
        if "questions" in user:
            n = len(user["questions"])
            content = {"answers": [{"id": q["id"], **_verdict(system, q)} for q in user["questions"]]}
        else:
            n = 1
            content = _verdict(system, user)
        text = json.dumps(content)
        data = json.dumps({
            "id": "bench", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": (len(system) + len(body["messages"][1]["content"])) // 4,
                      "completion_tokens": len(text) // 4},
        }).encode()
        with srv.lock:
            srv.in_flight -= 1
            srv.requests += 1
            srv.questions += n
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1300)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--concurrency", type=int, default=None)
    opts = ap.parse_args()

    server = JudgeServer(opts.latency)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Read by Django's settings here and by the worker (bench_pipeline.start_worker passes os.environ).
    os.environ.update({"JUDGE_OPENAI_BASE_URL": server.url, "JUDGE_OPENAI_API_KEY": "bench",
                       "JUDGE_OPENAI_MODEL": "bench-judge"})
    if opts.batch is not None:
        os.environ["JUDGE_OPENAI_BATCH"] = str(opts.batch)
    if opts.concurrency is not None:
        os.environ["JUDGE_OPENAI_CONCURRENCY"] = str(opts.concurrency)

    import bench_pipeline as bp  # sets Django up (a temp VAR_DIR, SQLite unless DATABASE_URL)
    import orjson
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.files.base import ContentFile
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from evaluation import services
    from evaluation.models import Submission

    call_command("migrate", verbosity=0)
    if connection.vendor != "sqlite":
        call_command("flush", interactive=False, verbosity=0)
    staff = get_user_model().objects.create_user("bench", is_staff=True)
    client = Client(SERVER_NAME="localhost")
    client.force_login(staff)
    slug, data = bp.synthetic_benchmark(opts.samples)
    lines = [x for x in data.splitlines() if orjson.loads(x)["mode"] in ("text", "adaptive")]
    data = b"\n".join(lines) + b"\n"
    print(f"database {connection.vendor}; judge latency {opts.latency:g} s; batch {settings.JUDGE_OPENAI_BATCH}, "
          f"concurrency {settings.JUDGE_OPENAI_CONCURRENCY}; {opts.samples:,} samples x 2 modes = {len(lines):,} lines")

    worker = bp.start_worker()
    try:
        warm = client.post(f"/api/v1/benchmarks/{slug}/submissions/",
                           {"file": ContentFile(lines[0] + b"\n", name="w.jsonl"), "model_name": "warm-up"})
        bp.wait(warm.json()["id"], 120)
        req0, q0 = server.counts()
        t0 = time.perf_counter()
        resp = client.post(f"/api/v1/benchmarks/{slug}/submissions/",
                           {"file": ContentFile(data, name="p.jsonl"), "model_name": "judged"})
        sub = bp.wait(resp.json()["id"], 3600)
        took = time.perf_counter() - t0
        req1, q1 = server.counts()
        print(f"scored: status {sub.status} {sub.failure_reason[:200]}; POST -> done {took:.1f} s; "
              f"{req1 - req0:,} requests, {q1 - q0:,} questions ({(q1 - q0) / took:.1f} questions/s); "
              f"peak {server.peak_in_flight} requests in flight")
        est = sub.judge_estimate
        if est:
            print(f"estimated before judging: {est['questions']:,} questions, {est['requests']:,} requests, "
                  f"{est['input_tokens']:,} input / {est['output_tokens']:,} output tokens")
        t0 = time.perf_counter()
        services.submission_rescore(submission=Submission.objects.get(pk=sub.pk))
        again = bp.wait(sub.pk, 3600)
        req2, q2 = server.counts()
        print(f"re-scored: status {again.status}; {time.perf_counter() - t0:.1f} s; {req2 - req1} requests, "
              f"{q2 - q1} questions")
    finally:
        worker.kill()
        worker.wait()
        server.shutdown()


if __name__ == "__main__":
    main()
