"""Shared pydantic bases: inputs forbid unknown fields, outputs read from ORM attributes."""

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict


class InputSchema(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class OutputSchema(BaseModel):
    model_config = ConfigDict(from_attributes=True)


T = TypeVar("T")


class Page(OutputSchema, Generic[T]):
    items: list[T]
    total: int
