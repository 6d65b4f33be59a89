"""Regenerates the bad-file corpus (checked in, so a reader can open each file)."""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def line(uid: str = "s1", mode: str = "text", **kw: object) -> str:
    obj = {"sample_id": uid, "mode": mode, "answer": "<answer>1</answer>"}
    obj.update(kw)
    return json.dumps(obj)


FILES = {
    "broken_json.jsonl": (line() + "\n" + '{"sample_id": "s2", "mode": "text", "answer": }' + "\n").encode(),
    "truncated_last_line.jsonl": (line() + "\n" + '{"sample_id": "s2", "mode": "te').encode(),
    "bom.jsonl": b"\xef\xbb\xbf" + (line() + "\n").encode(),
    "latin1.jsonl": (line() + "\n").encode() + '{"sample_id": "s2", "mode": "text", "answer": "caf\xe9"}\n'.encode("latin-1"),
    "utf16.jsonl": (line() + "\n").encode("utf-16"),
    "unknown_sample.jsonl": (line() + "\n" + line("nope-42") + "\n").encode(),
    "duplicate.jsonl": (line() + "\n" + line("s2") + "\n" + line() + "\n").encode(),
    "bad_mode.jsonl": (line() + "\n" + line("s2", mode="agentic") + "\n").encode(),
    "steps_wrong_type.jsonl": (line("s1", "adaptive", steps="rotate then zoom") + "\n").encode(),
    "negative_tokens.jsonl": (line("s1", usage={"input_tokens": -5, "output_tokens": 10}) + "\n").encode(),
    "empty.jsonl": b"",
    "long_line.jsonl": (line() + "\n" + line("s2", response="x" * 3000) + "\n").encode(),  # tests set a 2 KB limit
    "too_large.jsonl": ("\n".join(line(f"s{i % 6 + 1}") for i in range(40)) + "\n").encode(),  # tests set a 1 KB limit
}

if __name__ == "__main__":
    for name, data in FILES.items():
        (HERE / name).write_bytes(data)
