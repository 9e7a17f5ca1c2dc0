"""All ORM models; importing this package registers every table on Base.metadata."""

from backend.models.agent import Agent, EnrollmentToken
from backend.models.alert import Alert, AlertChannel, AlertDelivery
from backend.models.audit import AuditEvent
from backend.models.base import Base
from backend.models.campaign import Campaign
from backend.models.collab import Comment, RunTag
from backend.models.device import Device
from backend.models.environment import Environment
from backend.models.imports import ImportFile
from backend.models.outbox import OutboxTask
from backend.models.power import GridIntensityHour, PowerSample, RunEnergy, RunPower
from backend.models.result import ResultJob, ResultSeriesPoint, RunResult
from backend.models.review import Review, ReviewCandidate, ReviewComment  # noqa: F401
from backend.models.run import ACTIVE_STATUSES, FINAL_STATUSES, Run, RunStatus
from backend.models.run_target import RunTarget
from backend.models.schedule import Schedule, ScheduleSlot
from backend.models.series import Series, SeriesDetection, SeriesRun, SeriesTeamSettings
from backend.models.sharing import ShareLink
from backend.models.team import AccountToken, ApiToken, Invitation, Membership, Role, Team, User
from backend.models.workload import Workload

__all__ = [
    "AccountToken",
    "ACTIVE_STATUSES",
    "FINAL_STATUSES",
    "Agent",
    "Alert",
    "AlertChannel",
    "AlertDelivery",
    "ApiToken",
    "AuditEvent",
    "Comment",
    "Invitation",
    "RunTag",
    "ShareLink",
    "Base",
    "Campaign",
    "Schedule",
    "ScheduleSlot",
    "Device",
    "EnrollmentToken",
    "Environment",
    "GridIntensityHour",
    "ImportFile",
    "RunEnergy",
    "RunPower",
    "Membership",
    "OutboxTask",
    "PowerSample",
    "ResultJob",
    "ResultSeriesPoint",
    "Role",
    "Run",
    "RunResult",
    "RunStatus",
    "RunTarget",
    "Series",
    "SeriesDetection",
    "SeriesRun",
    "SeriesTeamSettings",
    "Team",
    "User",
    "Workload",
]
