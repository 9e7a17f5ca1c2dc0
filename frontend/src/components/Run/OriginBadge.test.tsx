import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { components } from "../../client/schema";
import { OriginBadge, SourceButton } from "./OriginBadge";

type Origin = components["schemas"]["RunOrigin"];

const origin = (files: Origin["files"]): Origin => ({
  kind: "imported",
  tool: "vdbench",
  version: "5.04.07",
  format: "vdbench-flatfile",
  file_name: "flatfile.html",
  sha256: "ab".repeat(32),
  reference: null,
  label: "imported from vdbench 5.04.07",
  source_url: "/api/v1/runs/r1/source",
  files,
});

describe("OriginBadge and SourceButton", () => {
  it("labels the run with the tool's version as the server says it", () => {
    render(<OriginBadge origin={origin([])} />);
    expect(screen.getByTestId("run-origin").textContent).toBe("imported from vdbench 5.04.07");
  });
  it("offers one download for a run of one file", () => {
    render(<SourceButton runId="r1" origin={origin([])} />);
    expect(screen.getAllByTestId("source-download")).toHaveLength(1);
    expect(screen.queryByTestId("source-download-file")).toBeNull();
  });
  it("offers each file of a run imported from several", () => {
    const files = ["flatfile.html", "summary.html", "totals.html"].map((n) => ({
      file_name: n,
      sha256: null,
      url: `/api/v1/runs/r1/source?file=${n}`,
    }));
    render(<SourceButton runId="r1" origin={origin(files)} />);
    const buttons = screen.getAllByTestId("source-download-file");
    expect(buttons.map((b) => b.textContent)).toEqual([
      "Download flatfile.html",
      "Download summary.html",
      "Download totals.html",
    ]);
  });
});
