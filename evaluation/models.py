from django.db import models


class JudgeVerdict(models.Model):
    """One cached judge verdict, keyed by (judge, prompt version, input hash).

    Re-scoring asks the cache first, so a question answered once is never paid for again,
    and every figure can be traced down to the verdicts it stands on.
    """

    judge = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100)
    input_hash = models.CharField(max_length=64)
    verdict = models.JSONField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "prompt_version", "input_hash"], name="judge_verdict_unique_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} {self.prompt_version} {self.input_hash[:12]}"
