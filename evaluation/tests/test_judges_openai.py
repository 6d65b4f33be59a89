"""The OpenAI judge against a real HTTP server speaking POST /v1/chat/completions."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evaluation.judges import InMemoryVerdictCache, JudgeError
from evaluation.judges.openai_judge import OpenAIJudge
from evaluation.metrics import Sample, Step, ToolCall
from evaluation.metrics.questions import AnswerQuestion, KeyStepQuestion, StepScoreQuestion


class FakeOpenAI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[tuple[str, object]] = []  # consumed first, one per request
        self.requests: list[dict] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


def _default_answer(body: dict) -> str:
    system = body["messages"][0]["content"]
    user = json.loads(body["messages"][1]["content"])
    if '"equivalent"' in system:
        return json.dumps({"equivalent": user["prediction"].lower() == user["gold"].lower()})
    if '"matched"' in system:
        return json.dumps({"matched": [True] * len(user["key_steps"])})
    if '"scores"' in system:
        return json.dumps({"scores": [0.5] * len(user["steps"])})
    return json.dumps({"valid": True})


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        assert self.path == "/v1/chat/completions"
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
            action = self.server.script.pop(0) if self.server.script else ("ok", None)
        kind, arg = action
        if kind == "sleep":
            time.sleep(float(arg))  # type: ignore[arg-type]
        if kind == "status":
            self._send(int(arg), {"error": {"message": "server exploded", "type": "server_error"}})  # type: ignore[arg-type]
            return
        content = arg if kind == "content" else _default_answer(body)
        self._send(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _judge(server: FakeOpenAI, **kw: object) -> OpenAIJudge:
    opts: dict = {"model": "judge-model", "base_url": server.url, "api_key": "test",
                  "timeout": 5.0, "max_concurrency": 2, "max_retries": 2,
                  "sleep": lambda s: None}
    opts.update(kw)
    return OpenAIJudge(**opts)


SAMPLE = Sample(uid="s", question="What is the total?", answer="831K",
                key_steps=("Rotate the image", "Read the total"))


def test_json_answers_parsed_for_each_kind(server: FakeOpenAI) -> None:
    judge = _judge(server)
    assert judge.answer_equivalence([AnswerQuestion(SAMPLE, "831k"),
                                     AnswerQuestion(SAMPLE, "900K")]) == [True, False]
    steps = (Step("rotate", ToolCall("rotate", {"angle": 90})), Step("read it"))
    assert judge.key_step_matching([KeyStepQuestion(SAMPLE, steps)]) == [(True, True)]
    assert judge.step_scores([StepScoreQuestion(SAMPLE, steps, (True, None))]) == [(0.5, 0.5)]
    req = server.requests[0]
    assert req["model"] == "judge-model"
    assert req["response_format"] == {"type": "json_object"}
    assert len(server.requests) == 4


def test_malformed_answer_is_retried(server: FakeOpenAI) -> None:
    server.script = [("content", "not json at all"), ("content", '{"equivalent": "yes"}')]
    judge = _judge(server)
    assert judge.answer_equivalence([AnswerQuestion(SAMPLE, "831K")]) == [True]
    assert len(server.requests) == 3


def test_wrong_length_verdict_list_is_malformed(server: FakeOpenAI) -> None:
    server.script = [("content", '{"matched": [true]}')]
    judge = _judge(server)
    got = judge.key_step_matching([KeyStepQuestion(SAMPLE, (Step("x"),))])
    assert got == [(True, True)] and len(server.requests) == 2


def test_server_error_is_retried_then_succeeds(server: FakeOpenAI) -> None:
    server.script = [("status", 500), ("status", 503)]
    judge = _judge(server)
    assert judge.answer_equivalence([AnswerQuestion(SAMPLE, "831K")]) == [True]
    assert len(server.requests) == 3


def test_timeout_is_retried(server: FakeOpenAI) -> None:
    server.script = [("sleep", 2.0)]
    judge = _judge(server, timeout=0.5)
    start = time.monotonic()
    assert judge.answer_equivalence([AnswerQuestion(SAMPLE, "831K")]) == [True]
    assert time.monotonic() - start < 2.0  # did not wait for the slow answer
    assert len(server.requests) == 2


def test_persistent_failure_raises_a_clear_judge_error(server: FakeOpenAI) -> None:
    server.script = [("status", 500)] * 3
    judge = _judge(server)
    with pytest.raises(JudgeError, match=r"no valid answer_equivalence verdict after 3 attempts"):
        judge.answer_equivalence([AnswerQuestion(SAMPLE, "831K")])
    assert len(server.requests) == 3


def test_client_error_is_not_retried(server: FakeOpenAI) -> None:
    server.script = [("status", 401)]
    with pytest.raises(JudgeError, match="HTTP 401"):
        _judge(server).answer_equivalence([AnswerQuestion(SAMPLE, "831K")])
    assert len(server.requests) == 1


def test_cached_verdicts_are_not_asked_again(server: FakeOpenAI) -> None:
    cache = InMemoryVerdictCache()
    questions = [AnswerQuestion(SAMPLE, "831k"), AnswerQuestion(SAMPLE, "900K"),
                 AnswerQuestion(SAMPLE, "831k")]  # a repeat within the batch
    first = _judge(server, cache=cache).answer_equivalence(questions)
    assert first == [True, False, True] and len(server.requests) == 2 and len(cache) == 2
    again = _judge(server, cache=cache).answer_equivalence(questions)
    assert again == first and len(server.requests) == 2
    _judge(server, cache=cache).answer_equivalence([AnswerQuestion(SAMPLE, "832K")])
    assert len(server.requests) == 3
