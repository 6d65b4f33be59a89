"""Private storage: files no web server may hand out (docs/security.md).

Uploaded prediction files and benchmark media (sample images: the test split's are secret) live
under ``PRIVATE_MEDIA_ROOT``, a root of its own, never under ``MEDIA_ROOT`` / ``MEDIA_URL``. They
have no URL: they reach a browser only through views that check who is asking.

A model's file field names the storage by the callable, so the migration records the callable, not
a path (the field calls it once, when the model class is built):

    image = models.FileField(storage=private_storage, upload_to=...)
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, default_storage, storages
from django.db import transaction

PRIVATE = "private"  # the name in settings.STORAGES


PARTIAL_PREFIX = ".partial-"  # a file being written; a name no row holds (a killed process may leave one)


class AtomicFileSystemStorage(FileSystemStorage):
    """A file system storage whose files appear whole or not at all.

    Django's own ``_save`` writes straight under the final name, so a write that fails half-way (a full
    disk: ``OSError(ENOSPC)``) leaves a partial file behind under a name a reader may open. Here the file
    is written under a hidden partial name beside it, then linked to its final name (a new name if that
    one is taken, as Django does) and the partial name removed; on any failure the partial file is
    deleted and the error goes on to the caller, who says what happened.
    """

    def _save(self, name: str, content: Any) -> str:
        folder, base = posixpath.split(name)
        partial = posixpath.join(folder, f"{PARTIAL_PREFIX}{secrets.token_hex(8)}-{base}"[:200])
        try:
            written = super()._save(partial, content)
        except BaseException:
            self._discard(partial)
            raise
        try:
            return self._publish(self.path(written), name)
        finally:
            self._discard(written)

    def _publish(self, source: str, name: str) -> str:
        if self._allow_overwrite:
            os.replace(source, self.path(name))
            return name.replace("\\", "/")
        linked = self._link(source, name)
        if linked is not None:
            return linked
        while os.path.exists(self.path(name)):  # a file system without hard links: check, then rename
            name = self.get_available_name(name)
        os.rename(source, self.path(name))
        return name.replace("\\", "/")

    def _link(self, source: str | Path, name: str) -> str | None:
        """Hard-link ``source`` under ``name``, or the next free name (never over an existing file); the name
        used, or None when the file system cannot link it there (another device, no hard links)."""
        while True:
            try:
                os.link(source, self.path(name))
            except FileExistsError:
                name = self.get_available_name(name)
                continue
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                    raise
                return None
            return name.replace("\\", "/")

    def save_local(self, name: str, source: Path) -> str:
        """Store the finished local file ``source`` under ``name`` (another name if that one is taken, as
        ``save`` does). A hard link when ``source`` is on this storage's file system: the file appears whole at
        once, as ``_save``'s do, and nothing is copied. Else (another file system, no hard links, a storage that
        overwrites) ``save``'s copy under a partial name. Only for a file nobody else writes (an import's own
        work file): the stored file and ``source`` are then one file."""
        if not self._allow_overwrite:
            os.makedirs(os.path.dirname(self.path(name)), exist_ok=True)
            linked = self._link(source, name)
            if linked is not None:
                if self.file_permissions_mode is not None:
                    os.chmod(self.path(linked), self.file_permissions_mode)
                return linked
        with source.open("rb") as handle:
            return self.save(name, File(handle))

    def _discard(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path(name))


@contextmanager
def written_whole(out: Path) -> Iterator[Path]:
    """The path to write a local file (an export) under: a hidden partial name beside ``out``, renamed to
    ``out`` when the block ends, deleted if it raises. So ``out`` is the whole file or not there at all
    (an earlier ``out`` stays until the new one is complete)."""
    partial = out.with_name(f"{PARTIAL_PREFIX}{secrets.token_hex(8)}-{out.name}")
    try:
        yield partial
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


class PrivateFileSystemStorage(AtomicFileSystemStorage):
    """A file system storage without URLs: asking for one is a programming error, not a broken link."""

    def url(self, name: str | None) -> str:
        raise ValueError(f"{name!r} is in private storage and has no public URL; serve it through a view "
                         "that checks access")


def private_storage() -> Storage:
    """The storage of settings.STORAGES["private"] (for ``FileField(storage=private_storage)``)."""
    return storages[PRIVATE]


def random_name(folder: str, filename: str) -> str:
    """``folder/<32 random hex digits><suffix of filename>``: nothing in the name can be guessed."""
    suffix = PurePosixPath(filename or "").suffix.lower()
    if not suffix.isascii() or len(suffix) > 10 or not suffix[1:].isalnum():
        suffix = ""
    return f"{folder.rstrip('/')}/{secrets.token_hex(16)}{suffix}"


def move_to_private(model: type, field: str, *, rename: Callable[[object, str], str] | None = None) -> int:
    """Move the files of ``model.field`` still in the default storage (MEDIA_ROOT) to private storage.

    For data migrations and safe to run again: a row whose file is already private is left alone, a
    file missing from both is left for the pages that report missing files. ``rename(row, old)``
    gives a new name (e.g. a random one); by default the name stays. The old copies are deleted
    only once the transaction that repointed the rows has committed, so a failed migration loses no
    file. Returns the number of rows moved.
    """
    problem = private_root_problem()
    if problem:
        raise RuntimeError(problem)
    private = private_storage()
    moved = 0
    done: dict[str, str] = {}  # old name -> new name (rows may share a content-addressed file)
    for row in model.objects.exclude(**{field: ""}).only("pk", field).iterator():
        old = getattr(row, field).name
        if old not in done:
            if not default_storage.exists(old):
                continue  # already private, or missing everywhere
            new = rename(row, old) if rename else old
            if not private.exists(new):
                with default_storage.open(old, "rb") as handle:
                    saved = private.save(new, handle)
                assert saved == new, f"private storage renamed {new} to {saved}"
            done[old] = new
            transaction.on_commit(lambda name=old: default_storage.delete(name))
        if done[old] != old:
            model.objects.filter(pk=row.pk).update(**{field: done[old]})
        moved += 1
    return moved


def move_names_to_private(names: list[str]) -> int:
    """Move files named outside any file field (a video's frames) from the default storage, keeping names."""
    problem = private_root_problem()
    if problem:
        raise RuntimeError(problem)
    private = private_storage()
    moved = 0
    for name in names:
        if not default_storage.exists(name):
            continue
        if not private.exists(name):
            with default_storage.open(name, "rb") as handle:
                saved = private.save(name, handle)
            assert saved == name, f"private storage renamed {name} to {saved}"
        transaction.on_commit(lambda name=name: default_storage.delete(name))
        moved += 1
    return moved


def private_root_problem() -> str | None:
    """Why the private root is not private (inside MEDIA_ROOT, or holding it), or None."""
    private = Path(settings.PRIVATE_MEDIA_ROOT).resolve()
    media = Path(settings.MEDIA_ROOT).resolve()
    if private == media or media in private.parents or private in media.parents:
        return (f"PRIVATE_MEDIA_ROOT ({private}) and MEDIA_ROOT ({media}) must be separate folders, neither "
                "inside the other: a web server serving MEDIA_ROOT would hand out private files")
    return None


@checks.register(checks.Tags.security)
def check_private_root(app_configs: object = None, **kwargs: object) -> list[checks.CheckMessage]:
    """``manage.py check`` (and every start) refuses a private root that a media server would serve."""
    problem = private_root_problem()
    return [checks.Error(problem, id="storages.E001")] if problem else []
