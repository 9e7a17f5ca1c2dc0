"""Reporting a run's end to the server: through the spool, or directly when the spool cannot
store it.

Normally a result or failure is written to the spool first (so nothing measured is lost while
the server is away) and then uploaded; an entry not acknowledged is retried by the spool thread.
When the spool write itself fails (the disk is full, the directory is gone) the report is
uploaded at once from memory instead of being thrown away. If a result cannot be delivered that
way either, the run is failed on the server at once with the real reason, instead of waiting
minutes for the lease to expire. A failed spool write leaves no temp file (write_private_file).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from uuid import UUID

from pydantic import ValidationError

from . import __version__
from .client import ApiClient, ApiError, PermanentError
from .runner import EngineOutcome
from .schemas import FailureReport, Lease, PowerUpload, ResultUpload, TargetResultUpload
from .spool import Delivery, Spool, SpoolEntry, new_upload_id

log = logging.getLogger("iowatt_agent.loop")

MAX_REASON_CHARS = 2000  # the server's FailureReport.reason limit
DIRECT_ATTEMPTS = 3


class Reporter:
    """Reports runs for the worker thread; `kick` wakes the spool thread for an entry to retry."""

    def __init__(self, spool: Spool, client: ApiClient, kick: Callable[[], None]) -> None:
        self.spool = spool
        self.client = client
        self.kick = kick

    def result(self, lease: Lease, outcome: EngineOutcome, power: dict[str, object] | None) -> Delivery:
        assert outcome.result is not None and outcome.exit_code is not None
        power_upload = None
        if power is not None:
            try:
                power_upload = PowerUpload.model_validate(power)
            except ValidationError as exc:  # a driver bug must not cost the benchmark's result
                log.error("power.invalid run_id=%s error=%s: result sent without power", lease.run_id, exc)
        targets = None
        if outcome.target_results is not None:  # a multi-target run: each target's document
            targets = [
                TargetResultUpload(target_index=i, engine_result=doc, engine_exit_code=0)
                for i, doc in enumerate(outcome.target_results)
            ]
        upload = ResultUpload(
            lease_id=lease.lease_id,
            upload_id=new_upload_id(),
            engine_result=outcome.result if targets is None else None,
            targets=targets,
            engine_exit_code=outcome.exit_code,
            started_at=outcome.started_at,
            finished_at=outcome.finished_at,
            agent_version=__version__,
            power=power_upload,
        )
        try:
            entry = self.spool.put_result(upload, lease.run_id)
        except OSError as exc:
            return self._result_without_spool(lease, upload, exc)
        log.info(
            "run.succeeded run_id=%s upload_id=%s spooled=%s", lease.run_id, upload.upload_id, entry.path.name
        )
        return self._deliver(entry)

    def failure(
        self, lease: Lease, *, reason: str, exit_code: int | None, stderr_tail: str, cancelled: bool
    ) -> Delivery:
        report = failure_report(
            lease, reason, exit_code=exit_code, stderr_tail=stderr_tail, cancelled=cancelled
        )
        log.info("run.failed run_id=%s cancelled=%s reason=%s", lease.run_id, cancelled, reason)
        try:
            entry = self.spool.put_failure(report, lease.run_id)
        except OSError as exc:
            log.error(
                "spool.write_failed run_id=%s error=%s: reporting the failure directly", lease.run_id, exc
            )
            return self._post_failure(lease.run_id, report)
        return self._deliver(entry)

    def _deliver(self, entry: SpoolEntry) -> Delivery:
        outcome = self.spool.deliver(entry, self.client, attempts=DIRECT_ATTEMPTS)
        if outcome is Delivery.RETRY:
            self.kick()
        return outcome

    def _result_without_spool(self, lease: Lease, upload: ResultUpload, spool_error: OSError) -> Delivery:
        log.error(
            "spool.write_failed run_id=%s upload_id=%s error=%s: uploading the result directly",
            lease.run_id,
            upload.upload_id,
            spool_error,
        )
        try:
            status = self.client.put_result(lease.run_id, upload, attempts=DIRECT_ATTEMPTS)
        except ApiError as exc:
            log.error("run.result_lost run_id=%s error=%s: failing the run now", lease.run_id, exc)
            reason = (
                f"the agent could not keep the benchmark's result: the spool write failed "
                f"({spool_error}) and the direct upload failed ({exc})"
            )
            self._post_failure(lease.run_id, failure_report(lease, reason))
            return Delivery.REJECTED if isinstance(exc, PermanentError) else Delivery.RETRY
        log.info(
            "run.succeeded run_id=%s upload_id=%s spooled=no delivered_directly status=%s",
            lease.run_id,
            upload.upload_id,
            status,
        )
        return Delivery.DELIVERED

    def _post_failure(self, run_id: UUID, report: FailureReport) -> Delivery:
        """A failure that could not be spooled: one direct attempt series, then it is lost (the
        lease expires on the server)."""
        try:
            self.client.post_failure(run_id, report, attempts=DIRECT_ATTEMPTS)
        except PermanentError as exc:
            log.error("run.failure_rejected run_id=%s error=%s", run_id, exc)
            return Delivery.REJECTED
        except ApiError as exc:
            log.error(
                "run.failure_lost run_id=%s error=%s: neither spooled nor delivered; the server fails "
                "the run when its lease expires",
                run_id,
                exc,
            )
            return Delivery.RETRY
        log.info("run.failure_delivered_directly run_id=%s", run_id)
        return Delivery.DELIVERED


def failure_report(
    lease: Lease, reason: str, *, exit_code: int | None = None, stderr_tail: str = "", cancelled: bool = False
) -> FailureReport:
    return FailureReport(
        lease_id=lease.lease_id,
        upload_id=new_upload_id(),
        reason=(reason.strip() or "engine failed")[:MAX_REASON_CHARS],
        exit_code=exit_code,
        stderr_tail=stderr_tail,
        cancelled=cancelled,
    )
