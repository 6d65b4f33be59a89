"""The embedded broker (kombu's filesystem transport, for ``scripts/run`` and the tests' first path),
with one fix: a message is written whole before a consumer can see it.

kombu's ``filesystem`` Channel creates the message file under its final name and then writes it; a
consumer that lists the folder in between moves and reads an empty (or partial) file, and the worker
dies with ``Unrecoverable error: JSONDecodeError`` (seen in the worker tests under load, the flaky
landings of issue 27 and 40). Here the message is written under a name no consumer reads
(``.part``), then renamed to its final name, which is atomic on one file system.

``use()`` (called where the Celery app is made, config/celery.py) makes ``filesystem://`` name this
transport in the process, before any connection is made: a URL chooses the broker as before (a test
that points the app at Redis gets Redis).
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu import transport as transports
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + ".part"  # "<queue>.msg.part": never a queue's "<queue>.msg" suffix
        try:
            with open(partial, "wb") as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel


def use() -> None:
    transports.TRANSPORT_ALIASES["filesystem"] = f"{__name__}:Transport"
    transports._transport_cache.pop("filesystem", None)
