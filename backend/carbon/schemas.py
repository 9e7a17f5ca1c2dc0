from backend.kit.schema import OutputSchema


class GridIntensityRead(OutputSchema):
    region: str
    name: str
    g_per_kwh: float
    year: int
    source: str


class EmbodiedDefaultRead(OutputSchema):
    media: str
    kg_per_drive: float | None
    kg_per_gb: float | None
    low: float
    high: float
    source: str
