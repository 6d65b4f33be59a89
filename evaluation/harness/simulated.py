"""The simulated model: a small local server speaking OpenAI's chat-completions API, for the demo,
the tests and the bench. It is not a model: it looks the question up in a key file and answers by
a fixed, documented policy, so the scores a run gets from it are known in advance.

    python -m evaluation.harness.simulated --key KEY.jsonl [--port 0] [--delay 0] [--log LOG.jsonl]
        [--script SCRIPT.json] [--tool-calls 1] [--served-model NAME] [--seed 0] [--ignore-tool-images]

It prints ``SIMULATED MODEL http://127.0.0.1:PORT/v1`` once it listens. Standard library only.

- The key file has one JSON object per sample: ``uid``, ``question``, ``options``, ``answer``,
  ``answer_type``, ``img0_sha256``, ``oracle_sha256`` (the oracle image the harness sends) and
  optionally ``toolchain`` (the reference calls). A request is matched to a sample by its question,
  options and first image.
- The mode is read from the request: tools offered (or the tagged-text protocol in the system
  prompt) is adaptive, no image is blind, the sample's oracle image (when it differs from img0) is
  oracle, else text.
- Policy: the answer is right when ``correct(uid, mode)`` says so (a hash of seed, uid and mode
  against the mode's rate, ``RATES``), else surely wrong (another letter, ten times the number plus
  17, or "simulated wrong answer"). In adaptive mode it first makes ``--tool-calls`` calls (the sample's
  reference chain where it has one, else a zoom on the middle, then a contrast step), one per turn,
  each on the latest image, and answers only if every tool image reached it; if a tool's image is
  missing it answers "NO TOOL IMAGE" (wrong). With ``--ignore-tool-images`` it makes the same calls, then
  looks at none of their images (sent or not) and answers as it does in text mode: tools that cannot
  change anything (the Tools tab's third demo model, docs/metrics.md section 15).
- A key entry with ``detail`` (a box ``[x1, y1, x2, y2]`` in the original's pixels: the HR-Bench-shaped demo)
  holds a detail too small to read in the image as sent: text and blind modes answer it wrong, oracle (the
  image cut to the regions) right, and adaptive right only when one of its ``zoom_in`` calls on img0 cropped a
  box containing the detail and the image reached it (docs/runs.md, "Full resolution").
- ``--script`` maps a uid to a behaviour, to test what a run does with a bad endpoint: ``timeout``
  (answers after ``--slow`` seconds), ``error500``, ``rate429`` (the first request of each mode is
  refused with ``Retry-After: 1``), ``bad_arguments``, ``truncated_arguments``, ``huge_arguments`` (2 MB)
  and ``unknown_tool`` (the first call is malformed, then the policy), ``loop`` (calls tools for ever), ``content_filter``.
- A proposal request (annotation/prompts/proposals_v*.txt: its system prompt opens with PROPOSAL_SYSTEM) is
  answered by ``proposal_reply`` from the key's ``regions``, ``transform``, ``key_steps`` and ``toolchain``
  (the approved annotation's); ``--script`` ``bad_proposal`` and ``garbled_proposal`` answer it invalid.
- Faults of the whole endpoint, for the drills (docs/runs.md, "When the provider fails"): ``--outage
  AFTER:SECONDS`` (after AFTER requests, every request for SECONDS has its connection closed with no
  answer, as a server that went away), ``--fail-every N:STATUS[:RETRY_AFTER]`` (every N-th request is
  answered with that HTTP status, with ``Retry-After`` when given). Neither is logged as a request.
- ``--bill`` appends the usage of every answer it sends, for the tests of what a run spends.
- ``--log`` appends one line per request: uid, mode, turn, the SHA-256 of the request body and of
  each image it received since its last answer.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RATES = {"text": 0.6, "adaptive": 0.75, "oracle": 0.85, "blind": 0.3}
NO_IMAGE = "NO TOOL IMAGE"
WRONG_TEXT = "simulated wrong answer"
_QUESTION = re.compile(r"Question: (.*?)(?:\nOptions:\n|\n\n|\Z)", re.S)
_OPTION = re.compile(r"^([A-Z])\. (.*)$", re.M)
_MADE = re.compile(r"made (img\d+) \((\d+) x (\d+) pixels\)")
_TOOL_NAMES = re.compile(r'"name": "([a-z0-9_]+)"')
# A proposal request (annotation/prompts/proposals_v*.txt) opens its system prompt with these words.
PROPOSAL_SYSTEM = "You propose annotations"
_SENT_SIZE = re.compile(r"The image \(img0\) is (\d+) x (\d+) pixels")


def correct(uid: str, mode: str, *, seed: int = 0, rates: dict[str, float] = RATES) -> bool:
    """Whether the simulated model answers ``uid`` right in ``mode`` (fixed for a seed)."""
    digest = hashlib.sha256(f"{seed}:{uid}:{mode}".encode()).hexdigest()
    return int(digest[:8], 16) % 1000 < round(rates.get(mode, 0.0) * 1000)


def wrong_answer(entry: dict[str, Any]) -> str:
    options = entry.get("options") or {}
    gold = str(entry.get("answer", "")).strip()
    if options:
        letters = sorted(options)
        others = [k for k in letters if k.upper() != gold.upper()]
        return others[0] if others else "Z"
    try:
        # Far from the gold, whatever its tolerance: ten times it, plus 17.
        return str(float(gold.replace(",", "")) * 10 + 17).removesuffix(".0")
    except ValueError:
        return WRONG_TEXT


def answer_for(entry: dict[str, Any], mode: str, *, seed: int = 0, zoomed: list[list[float]] | None = None) -> str:
    """``zoomed``: the boxes of the zoom_in calls the model made on img0 (a sample with a ``detail``)."""
    detail = entry.get("detail")
    if detail:
        readable = mode == "oracle" or (mode == "adaptive" and any(_contains(box, detail) for box in zoomed or []))
        return str(entry["answer"]) if readable else wrong_answer(entry)
    return str(entry["answer"]) if correct(entry["uid"], mode, seed=seed) else wrong_answer(entry)


def _contains(box: list[float], detail: list[float]) -> bool:
    return box[0] <= detail[0] and box[1] <= detail[1] and box[2] >= detail[2] and box[3] >= detail[3]


def _zooms(messages: list[dict[str, Any]]) -> list[list[float]]:
    """The boxes of the zoom_in calls on img0 in the conversation so far (function calls or tagged text)."""
    boxes = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        found = [((c.get("function") or {}).get("name"), _loads((c.get("function") or {}).get("arguments") or ""))
                 for c in m.get("tool_calls") or []]
        for raw in re.findall(r"<tool_call>(.*?)</tool_call>", m.get("content") or "", re.S):
            call = _loads(raw)
            if isinstance(call, dict):
                found.append((call.get("name"), call.get("arguments")))
        for name, args in found:
            if name == "zoom_in" and isinstance(args, dict) and args.get("image", "img0") == "img0":
                box = args.get("bbox")
                if isinstance(box, list) and len(box) == 4:
                    boxes.append(box)
    return boxes


class Key:
    def __init__(self, path: str) -> None:
        self.by_question: dict[str, list[dict[str, Any]]] = {}
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    entry = json.loads(line)
                    self.by_question.setdefault(entry["question"].strip(), []).append(entry)

    def find(self, text: str, first_image: str | None) -> dict[str, Any] | None:
        """The sample asked about: by its question, then its options, then its image (img0's or the
        oracle image's); samples alike in all three (a blind request) resolve to the first in the key."""
        found = _QUESTION.search(text)
        candidates = self.by_question.get(found.group(1).strip(), []) if found else []
        options = dict(_OPTION.findall(text.split("\nOptions:\n", 1)[1])) if "\nOptions:\n" in text else {}
        candidates = [e for e in candidates if {k: str(v) for k, v in (e.get("options") or {}).items()} == options] \
            or candidates
        for entry in candidates:
            if first_image and first_image in (entry.get("img0_sha256"), entry.get("oracle_sha256")):
                return entry
        return candidates[0] if candidates else None


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content or ""}]


def _image_sha(part: dict[str, Any]) -> str:
    url = part.get("image_url", {}).get("url", "")
    data = base64.b64decode(url.split(",", 1)[1]) if "," in url else b""
    return hashlib.sha256(data).hexdigest()


class Simulated(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(("127.0.0.1", args.port), _Handler)
        self.key = Key(args.key)
        self.delay = args.delay
        self.slow = args.slow
        self.seed = args.seed
        self.tool_calls = args.tool_calls
        self.ignore_tool_images = bool(getattr(args, "ignore_tool_images", False))
        self.served_model = args.served_model
        self.script: dict[str, str] = json.loads(Path(args.script).read_text(encoding="utf-8")) if args.script else {}
        self.log_path = args.log
        self.bill_path = args.bill
        self.lock = threading.Lock()
        self.refused: set[tuple[str, str]] = set()
        self.requests = 0
        self.outage_after, self.outage_seconds = (
            (int(args.outage.split(":")[0]), float(args.outage.split(":")[1])) if args.outage else (0, 0.0))
        self.outage_until: float | None = None
        parts = args.fail_every.split(":") if args.fail_every else []
        self.fail_every = int(parts[0]) if parts else 0
        self.fail_status = int(parts[1]) if len(parts) > 1 else 500
        self.fail_retry_after = parts[2] if len(parts) > 2 else ""

    def fault(self) -> str | int | None:
        """What the endpoint does with the next request instead of answering: "drop" (an outage), an
        HTTP status (``--fail-every``), or None."""
        with self.lock:
            self.requests += 1
            now = time.monotonic()
            if self.outage_seconds and self.requests > self.outage_after:
                if self.outage_until is None:
                    self.outage_until = now + self.outage_seconds
                if now < self.outage_until:
                    self.requests -= 1  # dropped: it never reached the model
                    return "drop"
            if self.fail_every and self.requests % self.fail_every == 0:
                return self.fail_status
        return None

    def log(self, record: dict[str, Any]) -> None:
        if self.log_path:
            with self.lock, open(self.log_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")


class _Handler(BaseHTTPRequestHandler):
    server: Simulated
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": self.server.served_model or "simulated", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "the body is not JSON"}})
            return
        fault = self.server.fault()
        if fault == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(fault, int):
            headers = {"Retry-After": self.server.fail_retry_after} if self.server.fail_retry_after else {}
            self._json(fault, {"error": {"message": f"simulated HTTP {fault}"}}, headers)
            return
        if self.server.delay:
            time.sleep(self.server.delay)
        status, payload, headers = respond(self.server, body, hashlib.sha256(raw).hexdigest())
        if status == 200 and self.server.bill_path:  # what this answer is billed, whether or not it is read
            with self.server.lock, open(self.server.bill_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(payload["usage"]) + "\n")
        self._json(status, payload, headers)

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def respond(server: Simulated, body: dict[str, Any], body_sha: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    messages = body.get("messages") or []
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    first_user: dict[str, Any] = next((m for m in messages if m.get("role") == "user"), {})
    texts = "\n".join(p.get("text", "") for p in _parts(first_user) if p.get("type") == "text")
    first_images = [_image_sha(p) for p in _parts(first_user) if p.get("type") == "image_url"]
    entry = server.key.find(texts, first_images[0] if first_images else None)
    tagged = "<tool_call>" in (system if isinstance(system, str) else "")
    if body.get("tools") or tagged:
        mode = "adaptive"
    elif not first_images:
        mode = "blind"
    elif entry is not None and first_images[0] == entry.get("oracle_sha256") != entry.get("img0_sha256"):
        mode = "oracle"
    else:
        mode = "text"
    turn = 1 + sum(1 for m in messages if m.get("role") == "assistant")
    # What came since the model's last answer: tool results and their images.
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    since = messages[last_assistant + 1:] if last_assistant >= 0 else []
    new_images = [_image_sha(p) for m in since for p in _parts(m) if p.get("type") == "image_url"]
    made = [m.group(1) for msg in since for p in _parts(msg) if p.get("type") == "text"
            for m in _MADE.finditer(p.get("text", ""))]
    server.log({"uid": entry["uid"] if entry else None, "mode": mode, "turn": turn, "body_sha256": body_sha,
                "new_images": new_images, "first_images": first_images, "at": time.time()})
    if entry is None:
        return 200, _completion(body, server, "I cannot find this question.", []), {}
    uid = str(entry["uid"])
    behaviour = server.script.get(uid, "")
    if isinstance(system, str) and system.startswith(PROPOSAL_SYSTEM):
        return 200, _completion(body, server, proposal_reply(entry, texts, seed=server.seed, behaviour=behaviour), []), {}
    if behaviour == "error500":
        return 500, {"error": {"message": "simulated server error"}}, {}
    if behaviour == "rate429":
        with server.lock:
            first = (uid, mode) not in server.refused
            server.refused.add((uid, mode))
        if first:
            return 429, {"error": {"message": "simulated rate limit"}}, {"Retry-After": "1"}
    if behaviour == "timeout":
        time.sleep(server.slow)
    if behaviour == "content_filter":
        return 200, _completion(body, server, "", [], finish="content_filter"), {}
    if mode == "adaptive":
        calls_wanted = 10 ** 6 if behaviour == "loop" else server.tool_calls
        if turn <= calls_wanted:
            call = _next_call(entry, turn, body, system, since, behaviour)
            return 200, _completion(body, server, f"Step {turn}: I will call {call['name']}.", [call], tagged=tagged), {}
        if server.ignore_tool_images:  # the images change nothing: the text-mode answer
            answer = answer_for(entry, "text", seed=server.seed, zoomed=[])
            return 200, _completion(body, server, f"The answer is clear. <answer>{answer}</answer>", []), {}
        if len(new_images) < len(made):
            return 200, _completion(body, server, f"<answer>{NO_IMAGE}</answer>", []), {}
    answer = answer_for(entry, mode, seed=server.seed, zoomed=_zooms(messages))
    return 200, _completion(body, server, f"Looking at it, the answer is clear. <answer>{answer}</answer>", []), {}


def proposal_reply(entry: dict[str, Any], text: str, *, seed: int = 0, behaviour: str = "") -> str:
    """The simulated model's proposal (docs/annotation.md, "Proposals"): the key's approved regions moved right
    by a tenth of their width times (seed + 1) (the middle half of img0 when it has none), its transform, its
    key steps but the last (two fixed steps when it has none), its chain, and a confidence from a hash of the
    uid. ``bad_proposal``: a box outside the image and an unknown transform; ``garbled_proposal``: no JSON."""
    if behaviour == "garbled_proposal":
        return "I think the evidence is in the top left corner."
    sent = _SENT_SIZE.search(text)
    width, height = int(entry.get("width") or 64), int(entry.get("height") or 64)
    scale = int(sent.group(1)) / width if sent and width else 1.0
    shift = 0.1 * (seed + 1)
    regions = [{"box": [round((x1 + shift * (x2 - x1)) * scale, 1), round(y1 * scale, 1),
                        round((x2 + shift * (x2 - x1)) * scale, 1), round(y2 * scale, 1)], "label": f"region {i + 1}"}
               for i, (x1, y1, x2, y2) in enumerate(entry.get("regions") or [])]
    if not regions:
        regions = [{"box": [round(width / 4 * scale, 1), round(height / 4 * scale, 1), round(3 * width / 4 * scale, 1),
                            round(3 * height / 4 * scale, 1)], "label": "middle"}]
    steps = list(entry.get("key_steps") or [])[:-1] or ["Look at the labelled part of the image.", "Read the answer."]
    digest = hashlib.sha256(f"{seed}:{entry['uid']}:proposal".encode()).hexdigest()
    proposal = {"regions": regions, "transform": entry.get("transform") or [], "key_steps": steps,
                "toolchain": [{"tool": c["tool"], "args": c.get("args") or {}} for c in entry.get("toolchain") or []
                              if isinstance(c, dict) and c.get("tool")],
                "confidence": round(0.3 + 0.65 * int(digest[:8], 16) / 0xFFFFFFFF, 3)}
    if behaviour == "bad_proposal":
        proposal["regions"] = [{"box": [0, 0, width * scale * 3, height * scale * 3], "label": "too big"}]
        proposal["transform"] = [{"op": "warp_magic", "strength": 2}]
    return "Here is my proposal:\n```json\n" + json.dumps(proposal) + "\n```"


def _offered(body: dict[str, Any], system: str) -> list[str]:
    if body.get("tools"):
        return [t["function"]["name"] for t in body["tools"]]
    return _TOOL_NAMES.findall(system)


def _next_call(entry: dict[str, Any], turn: int, body: dict[str, Any], system: str, since: list, behaviour: str
               ) -> dict[str, Any]:
    offered = _offered(body, system)
    if turn == 1 and behaviour == "bad_arguments":
        return {"name": offered[0] if offered else "zoom_in", "arguments": "{not json"}
    if turn == 1 and behaviour == "truncated_arguments":
        return {"name": offered[0] if offered else "zoom_in", "arguments": '{"bbox": [1, 2'}
    if turn == 1 and behaviour == "huge_arguments":
        return {"name": "zoom_in", "arguments": json.dumps({"bbox": [0, 0, 8, 8], "note": "x" * 2_000_000})}
    if turn == 1 and behaviour == "unknown_tool":
        return {"name": "magic_wand", "arguments": "{}"}
    chain = [c for c in entry.get("toolchain") or [] if c.get("tool") in offered]
    if turn <= len(chain):
        return {"name": chain[turn - 1]["tool"], "arguments": json.dumps(chain[turn - 1].get("args") or {})}
    if turn == 1 and "zoom_in" in offered:
        width, height = entry.get("width") or 64, entry.get("height") or 64
        box = [width // 4, height // 4, max(width // 4 + 1, 3 * width // 4), max(height // 4 + 1, 3 * height // 4)]
        return {"name": "zoom_in", "arguments": json.dumps({"bbox": box, "image": "img0"})}
    for name, args in (("contrast", {"alpha": 1.2, "beta": 0}), ("rotate", {"angle": 0}), ("flip", {"direction": "horizontal"})):
        if name in offered:
            return {"name": name, "arguments": json.dumps(args)}
    return {"name": offered[0] if offered else "zoom_in", "arguments": "{}"}


def _completion(body: dict[str, Any], server: Simulated, content: str, calls: list[dict[str, Any]], *,
                finish: str | None = None, tagged: bool = False) -> dict[str, Any]:
    text_chars = sum(len(p.get("text", "")) for m in body.get("messages") or [] for p in _parts(m)
                     if p.get("type") == "text")
    images = sum(1 for m in body.get("messages") or [] for p in _parts(m) if p.get("type") == "image_url")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls and tagged:
        message["content"] = content + "".join(
            f"\n<tool_call>{json.dumps({'name': c['name'], 'arguments': _loads(c['arguments'])})}</tool_call>"
            if _loads(c["arguments"]) is not None else f"\n<tool_call>{c['arguments']}</tool_call>" for c in calls)
    elif calls:
        message["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}}
                                 for i, c in enumerate(calls)]
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:24]
    return {"id": f"chatcmpl-sim-{digest}", "object": "chat.completion", "created": 0,
            "model": server.served_model or body.get("model") or "simulated",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": finish or ("tool_calls" if calls and not tagged else "stop")}],
            "usage": {"prompt_tokens": text_chars // 4 + 85 * images, "completion_tokens": len(content) // 4 + 1,
                      "total_tokens": text_chars // 4 + 85 * images + len(content) // 4 + 1}}


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


@contextmanager
def serving(key: str | Path, *args: str, log: str | Path | None = None) -> Iterator[str]:
    """Starts the simulated model in a process of its own; yields its base URL; stops it."""
    command = [sys.executable, "-m", "evaluation.harness.simulated", "--key", str(key), *args]
    if log is not None:
        command += ["--log", str(log)]
    proc = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("SIMULATED MODEL "):
            raise RuntimeError(f"the simulated model did not start: {line!r}")
        yield line.split()[-1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The simulated model (an OpenAI-compatible server).")
    parser.add_argument("--key", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--slow", type=float, default=5.0, help="seconds a 'timeout' sample takes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tool-calls", type=int, default=1)
    parser.add_argument("--served-model", default="")
    parser.add_argument("--ignore-tool-images", action="store_true",
                        help="adaptive mode: call tools, then answer as in text mode whatever they made")
    parser.add_argument("--script")
    parser.add_argument("--log")
    parser.add_argument("--bill", help="appends the usage of every answer sent (what the endpoint bills)")
    parser.add_argument("--outage", default="", help="AFTER:SECONDS: drop every request for SECONDS after AFTER requests")
    parser.add_argument("--fail-every", dest="fail_every", default="",
                        help="N:STATUS[:RETRY_AFTER]: answer every N-th request with STATUS")
    args = parser.parse_args(argv)
    server = Simulated(args)
    print(f"SIMULATED MODEL http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
