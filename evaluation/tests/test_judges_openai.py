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
        self.arrivals: list[float] = []  # time.monotonic() of each request
        self.refused_at: list[float] = []  # when each 429/503 was sent
        self.delay = 0.0  # seconds before every answer
        self.usage: list[dict] = []  # the usage reported with each answer
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


# Agent-X's judged kinds (constant scores, so the figures can be computed by hand in the tests)
AGENTX_GROUNDING, AGENTX_CONTEXT, AGENTX_TOOL = 0.5, 1.0, 0.75
AGENTX_TRACE = {"faithfulness": 0.5, "factual_precision": 1, "semantic_accuracy": 0.25}


def _verdict(system: str, user: dict) -> dict:
    if '"faithfulness"' in system:
        return dict(AGENTX_TRACE)
    if '"grounding"' in system:
        return {"grounding": [AGENTX_GROUNDING] * len(user["pairs"]), "context": [AGENTX_CONTEXT] * len(user["pairs"])}
    if '"tool_accuracy"' in system:
        return {"tool_accuracy": [AGENTX_TOOL] * len(user["calls"])}
    if '"equivalent"' in system:
        return {"equivalent": user["prediction"].lower() == user["gold"].lower()}
    if '"matched"' in system:
        return {"matched": [True] * len(user["key_steps"])}
    if '"scores"' in system:
        return {"scores": [0.5] * len(user["steps"])}
    return {"valid": True}


def _answers(body: dict) -> list[dict] | None:
    """The right answers to a batch request, in order (None for a single-question request)."""
    system = body["messages"][0]["content"]
    user = json.loads(body["messages"][1]["content"])
    if "questions" not in user:
        return None
    return [{"id": q["id"], **_verdict(system, q)} for q in user["questions"]]


def _default_answer(body: dict) -> str:
    answers = _answers(body)
    if answers is None:
        return json.dumps(_verdict(body["messages"][0]["content"], json.loads(body["messages"][1]["content"])))
    return json.dumps({"answers": answers})


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        assert self.path == "/v1/chat/completions"
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
            self.server.arrivals.append(time.monotonic())
            action = self.server.script.pop(0) if self.server.script else ("ok", None)
        kind, arg = action
        time.sleep(self.server.delay)
        if kind == "sleep":
            time.sleep(float(arg))  # type: ignore[arg-type]
        if kind == "status":
            self._send(int(arg), {"error": {"message": "server exploded", "type": "server_error"}})  # type: ignore[arg-type]
            return
        if kind == "busy":  # 429 asking to come back after `arg` seconds
            with self.server.lock:
                self.server.refused_at.append(time.monotonic())
            self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}},
                       {"Retry-After": str(arg)})
            return
        if kind == "reverse":
            content = json.dumps({"answers": _answers(body)[::-1]})
        elif kind == "drop":
            content = json.dumps({"answers": _answers(body)[:-1]})
        elif kind == "renumber":  # the right verdicts in the right order, without their ids
            content = json.dumps({"answers": [{k: v for k, v in a.items() if k != "id"} for a in _answers(body)]})
        else:
            content = arg if kind == "content" else _default_answer(body)
        # Tokens as a real server would count them, about 4 characters a token; kept for the tests.
        usage = {"prompt_tokens": sum(len(m["content"]) for m in body["messages"]) // 4,
                 "completion_tokens": len(content) // 4}
        with self.server.lock:
            self.server.usage.append(usage)
        self._send(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        })

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
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
    assert len(server.requests) == 3  # the two answer questions went in one request


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
    first = _judge(server, cache=cache, batch_size=1).answer_equivalence(questions)
    assert first == [True, False, True] and len(server.requests) == 2 and len(cache) == 2
    again = _judge(server, cache=cache, batch_size=1).answer_equivalence(questions)
    assert again == first and len(server.requests) == 2
    _judge(server, cache=cache, batch_size=1).answer_equivalence([AnswerQuestion(SAMPLE, "832K")])
    assert len(server.requests) == 3


# ------------------------------------------------------------------------------------ batches

def _numbered(n: int) -> list[AnswerQuestion]:
    """n distinct questions; the k-th is right (prediction = gold) when k is even."""
    out = []
    for k in range(n):
        sample = Sample(uid=f"s{k}", question=f"How many in {k}?", answer=f"v{k}")
        out.append(AnswerQuestion(sample, f"v{k}" if k % 2 == 0 else f"w{k}"))
    return out


def _expected(n: int) -> list[bool]:
    return [k % 2 == 0 for k in range(n)]


def test_questions_go_in_batches_of_the_configured_size(server: FakeOpenAI) -> None:
    cache = InMemoryVerdictCache()
    judge = _judge(server, batch_size=20, cache=cache)
    assert judge.answer_equivalence(_numbered(45)) == _expected(45)
    sizes = sorted(len(json.loads(r["messages"][1]["content"])["questions"]) for r in server.requests)
    assert sizes == [5, 20, 20]
    first = json.loads(server.requests[0]["messages"][1]["content"])["questions"][0]
    assert set(first) == {"id", "question", "options", "answer_type", "gold", "prediction"}
    assert "{\"answers\"" in server.requests[0]["messages"][0]["content"]  # the batch prompt (v2)
    assert judge.usage["requests"] == 3 and judge.usage["questions"] == 45
    assert _judge(server, cache=cache).answer_equivalence(_numbered(45)) == _expected(45)
    assert len(server.requests) == 3  # all cached: no request


def test_batch_size_one_sends_single_questions_with_the_v1_prompt(server: FakeOpenAI) -> None:
    judge = _judge(server, batch_size=1)
    assert judge.answer_equivalence(_numbered(3)) == _expected(3)
    assert len(server.requests) == 3
    user = json.loads(server.requests[0]["messages"][1]["content"])
    assert "questions" not in user and "prediction" in user
    assert '{"equivalent": true}' in server.requests[0]["messages"][0]["content"]


@pytest.mark.parametrize("fault", ["reverse", "drop", "renumber"])
def test_a_batch_answered_in_the_wrong_order_or_length_is_detected_and_asked_again(
        server: FakeOpenAI, fault: str) -> None:
    server.script = [(fault, None)]
    judge = _judge(server, batch_size=8, max_concurrency=1)
    # Reversed, the answers would swap right and wrong verdicts; they are refused, never used.
    assert judge.answer_equivalence(_numbered(8)) == _expected(8)
    sizes = [len(json.loads(r["messages"][1]["content"])["questions"]) for r in server.requests]
    assert sizes == [8, 4, 4]  # refused whole, then its halves


def test_a_malformed_batch_is_split_and_retried_rather_than_failed(server: FakeOpenAI) -> None:
    # The 8-batch, then its first half (4) and that half's first half (2) come back malformed.
    server.script = [("content", "not json"), ("content", '{"answers": "many"}'), ("content", "{}")]
    judge = _judge(server, batch_size=8, max_concurrency=1, max_retries=0)
    assert judge.answer_equivalence(_numbered(8)) == _expected(8)
    sizes = [len(json.loads(r["messages"][1]["content"])["questions"]) for r in server.requests]
    assert sizes == [8, 4, 2, 1, 1, 2, 4]


def test_a_single_question_answered_malformed_every_time_fails_with_a_clear_error(server: FakeOpenAI) -> None:
    server.script = [("content", "nope")] * 10
    with pytest.raises(JudgeError, match="no valid answer_equivalence verdict after 3 attempts"):
        _judge(server, batch_size=2, max_concurrency=1).answer_equivalence(_numbered(2))
    assert len(server.requests) == 4  # the pair, then the first one three times


def test_429_retry_after_pauses_every_thread_not_only_the_refused_one(server: FakeOpenAI) -> None:
    server.delay = 0.2
    server.script = [("busy", 1)]
    judge = _judge(server, batch_size=1, max_concurrency=4)
    start = time.monotonic()
    assert judge.answer_equivalence(_numbered(12)) == _expected(12)
    assert len(server.requests) == 13 and len(server.refused_at) == 1
    refused = server.refused_at[0]
    # Requests already in flight when the 429 came back may land just after it (on a loaded machine up to
    # a few tenths of a second: 51 ms was seen with two suites running); nothing new is sent by any
    # thread until the second it asked for has passed.
    late = [t - refused for t in server.arrivals if 0.3 < t - refused < 0.95]
    assert late == []
    assert time.monotonic() - start >= 1.0


def test_requests_per_minute_are_kept_by_all_threads_together(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluation.judges import openai_judge

    now = [0.0]
    slept: list[float] = []

    def fake_sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    monkeypatch.setattr(openai_judge.time, "sleep", fake_sleep)
    gate = openai_judge._Gate(requests_per_minute=3, tokens_per_minute=1000, clock=lambda: now[0])
    for _ in range(3):
        gate.enter(10)
    assert slept == []
    gate.enter(10)  # the fourth waits for the first to leave the minute
    assert now[0] == pytest.approx(60.0)
    gate.enter(995)  # the fourth's 10 tokens + 995 > 1000 a minute: waits for it to leave
    assert now[0] == pytest.approx(120.0)


def test_retry_after_is_read_in_seconds_milliseconds_or_as_a_date() -> None:
    from evaluation.judges.openai_judge import retry_after_seconds

    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({}) is None
    in_3s = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 3))
    assert 1.0 < retry_after_seconds({"retry-after": in_3s}) <= 3.0


def test_verdicts_of_answered_batches_are_stored_even_when_a_later_batch_fails(server: FakeOpenAI) -> None:
    server.script = [("ok", None), ("status", 401)]
    cache = InMemoryVerdictCache()
    with pytest.raises(JudgeError, match="HTTP 401"):
        _judge(server, batch_size=2, max_concurrency=1, cache=cache).answer_equivalence(_numbered(6))
    kept = len(cache)
    assert kept >= 2  # the first batch, paid for, is kept
    judge = _judge(server, batch_size=2, max_concurrency=1, cache=cache)
    assert judge.answer_equivalence(_numbered(6)) == _expected(6)
    assert judge.usage["questions"] == 6 - kept  # the next run asks only the rest


# A flaky judge is slow, not dead (issue 27): patience and the run's deadline, against the fake judge run as a
# process of its own (evaluation/tests/fake_judge.py).
@pytest.fixture
def judge_process() -> Iterator:
    from evaluation.tests.test_worker_integration import JudgeServer

    servers: list = []

    def make(**kw: object):  # noqa: ANN202
        servers.append(JudgeServer(**kw))  # type: ignore[arg-type]
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def _patient(server, **kw: object) -> OpenAIJudge:  # noqa: ANN001
    return OpenAIJudge(**{"model": "fake-judge", "base_url": server.env["JUDGE_OPENAI_BASE_URL"], "api_key": "test",
                          "timeout": 5.0, "max_concurrency": 2, "max_retries": 0, "batch_size": 1, "backoff": 0.05,
                          **kw})


def test_a_judge_failing_every_other_call_answers_everything_when_it_is_patient(judge_process) -> None:
    server = judge_process(flaky=True)
    questions = [AnswerQuestion(SAMPLE, f"{n}K") for n in range(8)]
    assert _patient(server, patience=30).answer_equivalence(questions) == [False] * 8
    assert server.failures >= 4
    with pytest.raises(JudgeError, match="after 1 attempts"):  # counted retries alone: the first refusal ends it
        _patient(judge_process(flaky=True)).answer_equivalence(questions)


def test_a_patient_judge_gives_up_after_its_patience_without_any_answer(judge_process) -> None:
    server = judge_process(flaky=False, fail_after=0)  # nothing but HTTP 500
    started = time.monotonic()
    with pytest.raises(JudgeError, match="no valid answer_equivalence verdict"):
        _patient(server, patience=1.0).answer_equivalence([AnswerQuestion(SAMPLE, "1K")])
    assert 1.0 <= time.monotonic() - started < 5
    assert server.calls >= 3


def test_a_patient_judge_stops_at_the_runs_deadline_even_while_it_still_answers(judge_process) -> None:
    server = judge_process(flaky=True)  # it answers half the time: patience alone would go on
    judge = _patient(server, patience=600, max_concurrency=1, deadline=time.monotonic() + 1.0, backoff=0.4)
    questions = [AnswerQuestion(SAMPLE, f"{n}K") for n in range(40)]
    started = time.monotonic()
    with pytest.raises(JudgeError):
        judge.answer_equivalence(questions)
    assert time.monotonic() - started < 4
    assert 0 < judge.questions_judged < judge.questions_asked == 40
