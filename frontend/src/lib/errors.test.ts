import { describe, expect, it } from "vitest";
import { ApiError, fieldErrorsFor } from "./errors";

describe("ApiError", () => {
  it("reads the server's error shape", () => {
    const e = new ApiError(422, {
      error: "validation_error",
      message: "invalid request",
      detail: [{ field: "workload.jobs.0.bs_bytes", message: "must be greater than 0" }],
    });
    expect(e.status).toBe(422);
    expect(e.code).toBe("validation_error");
    expect(e.message).toBe("invalid request");
    expect(e.fieldErrors).toEqual([
      { field: "workload.jobs.0.bs_bytes", message: "must be greater than 0" },
    ]);
  });
  it("names the request id of a server error, which its message refers to", () => {
    const e = new ApiError(500, {
      error: "internal_error",
      message: "internal server error; the request id names it in the server log",
      detail: null,
      request_id: "4f2c9a1e",
    });
    expect(e.requestId).toBe("4f2c9a1e");
    expect(e.message).toBe(
      "internal server error; the request id names it in the server log (request id 4f2c9a1e)",
    );
  });
  it("falls back for bodies of other shapes", () => {
    const e = new ApiError(500, "boom");
    expect(e.message).toBe("request failed with HTTP 500");
    expect(e.fieldErrors).toEqual([]);
  });
});

describe("fieldErrorsFor", () => {
  it("maps nested paths to form inputs", () => {
    const out = fieldErrorsFor(
      [
        { field: "body.workload.jobs.0.bs_bytes", message: "must be > 0" },
        { field: "target_path", message: "required" },
        { field: "workload.jobs.0.bs_bytes", message: "not a power of two" },
        { field: "something_else", message: "nope" },
      ],
      { bs_bytes: "bs", target_path: "target" },
    );
    expect(out).toEqual({ bs: "must be > 0; not a power of two", target: "required", "": "nope" });
  });
});

describe("fieldErrorsFor with indexed lists", () => {
  it("keeps a job's index so the error sits at that job's field", () => {
    const out = fieldErrorsFor(
      [
        { field: "workload.jobs.2.bs_bytes", message: "too big" },
        { field: "workload.jobs", message: "job names must be unique" },
        { field: "target_path", message: "not allowed" },
      ],
      { bs_bytes: "bs", target_path: "target" },
      ["jobs"],
    );
    expect(out).toEqual({
      "jobs.2.bs": "too big",
      "": "job names must be unique",
      target: "not allowed",
    });
  });
});
