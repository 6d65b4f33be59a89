"""``manage.py verify_row SUBMISSION_ID``: recompute a row's digest from its stored records and compare it
with the digest stored when it was scored (docs/runs.md, "The verified tier"). Reads only."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Submission
from evaluation.records import verify


class Command(BaseCommand):
    help = ("Recompute a submission's row digest from its stored per-sample records; exit 0 printing 'ok', "
            "or 1 naming what differs (the digests and the modes).")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("submission_id", type=int)

    def handle(self, *args: object, **opts: object) -> None:
        sub = Submission.objects.select_related("benchmark").filter(pk=opts["submission_id"]).first()
        if sub is None:
            raise CommandError(f"no submission {opts['submission_id']}")
        found = verify(sub)
        if found is None:
            raise CommandError(f"submission {sub.pk}: no digest stored (not available: scored before digests "
                               f"existed, or not scored); re-score it with `manage.py score {sub.pk} --sync`",
                               returncode=1)
        if found.ok:
            self.stdout.write(f"ok: submission {sub.pk}, digest {sub.digest}")
            return
        problems = [f"{name} differs: stored {getattr(sub, name) or 'none'}" for name in found.what]
        if found.modes:
            problems.append("records differ in mode(s): " + ", ".join(found.modes))
        if found.dev_modes:
            problems.append("dev-split records differ in mode(s): " + ", ".join(found.dev_modes))
        raise CommandError(f"submission {sub.pk}: " + "; ".join(problems), returncode=1)
