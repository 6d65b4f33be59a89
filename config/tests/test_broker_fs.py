"""The embedded broker (config/broker_fs.py): a consumer never reads a message before it is written whole.

kombu's own filesystem transport creates the file under its final name and then writes it, so a
consumer listing the folder in between read an empty file and the worker died (JSONDecodeError)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kombu import Connection
from kombu.transport.virtual import Empty

from config.broker_fs import Transport

pytestmark = pytest.mark.same_on_every_path


def _channel(folder: Path, transport: type):  # noqa: ANN202
    for sub in ("queue", "processed", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    connection = Connection(transport=transport, transport_options={
        "data_folder_in": str(folder / "queue"), "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"), "control_folder": str(folder / "control")})
    return connection, connection.default_channel


def test_a_consumer_looking_while_a_message_is_being_written_sees_nothing(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The worst moment, made to happen: the consumer looks after the producer opened the file and before
    it wrote a byte (kombu's own transport hands it the empty file there: JSONDecodeError)."""
    import config.broker_fs as module

    connection, consumer = _channel(tmp_path, Transport)
    producer_connection, producer = _channel(tmp_path, Transport)
    looked: list[object] = []
    real_dumps = module.dumps

    def dumps_while_a_consumer_looks(payload: object) -> str:
        try:
            looked.append(consumer._get("jobs"))
        except Empty:
            looked.append("empty")
        return real_dumps(payload)

    monkeypatch.setattr(module, "dumps", dumps_while_a_consumer_looks)
    producer._put("jobs", {"n": 1, "body": "x" * 1000})
    monkeypatch.undo()
    assert looked == ["empty"]  # the message was not there yet, rather than there and empty
    assert consumer._get("jobs")["n"] == 1  # and once written, it is read whole
    assert not list((tmp_path / "queue").iterdir())  # no partial file left behind
    connection.release()
    producer_connection.release()


def test_the_embedded_broker_is_this_transport_and_a_broker_url_still_chooses_the_broker() -> None:
    from config import celery_app

    with Connection("filesystem://") as embedded, Connection("redis://127.0.0.1:6379/0") as redis:
        assert embedded.transport_cls == "filesystem" and isinstance(embedded.transport, Transport)
        assert not isinstance(redis.transport, Transport)
    assert celery_app.conf.broker_transport is None  # the URL decides (a test points the app at its own Redis)
