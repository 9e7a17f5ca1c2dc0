from backend.kit.schema import OutputSchema
from backend.run.schemas import RunRead


class Metric(OutputSchema):
    key: str
    label: str
    unit: str
    values: list[float | None]


class JobComparison(OutputSchema):
    name: str
    metrics: list[Metric]


class Comparison(OutputSchema):
    runs: list[RunRead]
    jobs: list[JobComparison]
    energy: list[Metric]  # run-level energy and carbon (whole load phase), values null without meter data
