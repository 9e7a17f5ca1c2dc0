"""Errors of the run domain."""

from iowatt_policy import Violation

from backend.errors import Invalid


class HostPolicyRefused(Invalid):
    """422: the host's reported policy refuses the run (ADR 0009). One `detail` entry per
    violation: `field` (the RunCreate field), `message` ending with the fix (the host command that
    would allow the run, or what to change instead), plus the stable `rule` and the bare `fix`."""

    code = "host_policy_refused"

    def __init__(
        self, violations: list[Violation], *, prefix: str = "", workload_field: str = "workload"
    ) -> None:
        detail = []
        for v in violations:
            field = v.field
            if workload_field != "workload" and (field == "workload" or field.startswith("workload.")):
                field = workload_field  # the run named a stored workload: point at it
            detail.append(
                {
                    "field": f"{prefix}{field}",
                    "message": f"host policy [{v.rule}]: {v.message}; {v.fix_text()}",
                    "rule": v.rule,
                    "fix": v.fix,
                }
            )
        first = detail[0]
        super().__init__(first["field"], first["message"])
        self.detail = detail
        self.message = "; ".join(f"{d['field']}: {d['message']}" for d in detail[:5])
        self.violations = violations
