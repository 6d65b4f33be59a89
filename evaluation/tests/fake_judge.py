"""A fake OpenAI-compatible judge, run as a process of its own by the worker tests
(``test_worker_integration.JudgeServer``). ``python -m evaluation.tests.fake_judge [--delay S]
[--flaky] [--fail-after N] [--hold-after N]`` prints ``port N`` once it listens. ``--flaky`` answers every
other call with HTTP 500 (the first one fails); ``--fail-after N`` answers N calls, then only 500s (a
judge gone for good); ``--hold-after N`` answers N calls, then holds every later one until ``POST
/release`` (at most 50 s, under the client's timeout): a stage that stays mid-judging for as long as a
test needs, however slow the machine. ``GET /stats`` gives what it saw: calls, failures, calls held
now and every question answered (canonical JSON). Verdicts: answers never equivalent, tool calls
valid, every key step matched, every step scored 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evaluation.judges import PROMPT_VERSIONS, load_prompt
from evaluation.judges.base import SINGLE_PROMPT_VERSIONS

KINDS = {load_prompt(k, v): k for versions in (PROMPT_VERSIONS, SINGLE_PROMPT_VERSIONS) for k, v in versions.items()}


def verdict(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    if kind == "answer_equivalence":
        return {"equivalent": False}
    if kind == "tool_call_validity":
        return {"valid": True}
    if kind == "key_step_matching":
        return {"matched": [True] * len(payload["key_steps"])}
    return {"scores": [1] * len(payload["steps"])}  # step_scores


def serve(delay: float, flaky: bool, fail_after: int | None = None, hold_after: int | None = None) -> ThreadingHTTPServer:
    lock = threading.Lock()
    released = threading.Event()
    stats: dict[str, Any] = {"calls": 0, "failures": 0, "held": 0, "questions": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            with lock:
                self._send(200, stats)

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if self.path == "/release":
                released.set()
                self._send(200, {"released": True})
                return
            with lock:
                stats["calls"] += 1
                fail = (flaky and stats["calls"] % 2 == 1) or (fail_after is not None and stats["calls"] > fail_after)
                stats["failures"] += fail
                hold = hold_after is not None and stats["calls"] > hold_after and not released.is_set()
                stats["held"] += hold
            if hold:
                released.wait(50)
                with lock:
                    stats["held"] -= 1
            time.sleep(delay)
            if fail:
                self._send(500, {"error": {"message": "overloaded", "type": "server_error"}})
                return
            kind = KINDS[body["messages"][0]["content"]]
            user = json.loads(body["messages"][1]["content"])
            if "questions" in user:  # a batch (JUDGE_OPENAI_BATCH > 1)
                asked = user["questions"]
                answer: dict[str, Any] = {"answers": [{"id": q["id"], **verdict(kind, q)} for q in asked]}
            else:
                asked = [user]
                answer = verdict(kind, user)
            with lock:
                stats["questions"].extend(json.dumps(q, sort_keys=True) for q in asked)
            self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": json.dumps(answer)}}]})

        def _send(self, code: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--flaky", action="store_true", help="fail every other call with HTTP 500")
    parser.add_argument("--fail-after", type=int, default=None, help="answer this many calls, then fail every one")
    parser.add_argument("--hold-after", type=int, default=None,
                        help="answer this many calls, then hold every later one until POST /release")
    args = parser.parse_args()
    httpd = serve(args.delay, args.flaky, args.fail_after, args.hold_after)
    print(f"port {httpd.server_address[1]}", flush=True)
    sys.stdout.close()
    httpd.serve_forever()


if __name__ == "__main__":
    main()
