import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { figureDirection, parseFigures } from "../components/Import/PublishedForm";
import { setToken } from "../lib/auth";
import { renderAt, stubApi } from "../test/render";
import { Import } from "./Import";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const ME = {
  id: "u1",
  email: "m@example.test",
  display_name: "M",
  teams: [{ id: "t1", name: "Lab", role: "member" }],
  password_set: true,
  email_verified: true,
  is_instance_admin: false,
  can_create_teams: true,
};

const FORMATS = [
  {
    format: "crystaldiskmark",
    tool: "CrystalDiskMark",
    aliases: ["cdm"],
    versions: ["5", "9"],
    file_kinds: ["text export"],
  },
  {
    format: "fio-json",
    tool: "fio",
    aliases: [],
    versions: ["2.x", "3.x"],
    file_kinds: ["--output-format=json", "--output-format=json+"],
  },
];

const dir = (bw: number, iops: number) => ({
  bw_bytes: bw,
  iops,
  io_bytes: bw,
  total_ios: iops,
  runtime_ms: 1000,
  lat: null,
  clat: {
    mean_ns: 95000,
    min_ns: 1000,
    max_ns: 500000,
    stddev_ns: 2000,
    percentiles_ns: { "99": 250000 },
  },
  slat: null,
});

function result(dryRun: boolean) {
  return {
    format: "fio-terse",
    tool: "fio",
    version: "3.33",
    file_name: "paste.txt",
    sha256: "ab".repeat(32),
    size_bytes: 600,
    dry_run: dryRun,
    duplicate: false,
    warnings: [],
    units: { bw_bytes: "bytes/s" },
    runs: [
      {
        name: "paste.txt",
        run_id: dryRun ? null : "r1",
        url: null,
        host: "imported",
        device: "unknown device",
        started_at: null,
        finished_at: null,
        host_facts: {},
        device_facts: {},
        command_line: null,
        absent: ["the job's options"],
        notes: [],
        jobs: [
          {
            name: "randread-4k",
            group: "0",
            settings: { rw: "randread", bs: 4096, iodepth: 1 },
            read: dir(41_943_040, 10240),
            write: null,
            trim: null,
            metrics: {},
          },
        ],
      },
    ],
  };
}

describe("Import page", () => {
  it("previews pasted text with its units, then stores it with the label fixed", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "GET /api/v1/imports/formats": () => ({ body: FORMATS }),
      "POST /api/v1/imports": (req) => {
        const dry = new URL(req.url).searchParams.get("dry_run") === "true";
        return { status: dry ? 200 : 201, body: result(dry) };
      },
    });
    renderAt(<Import />, { path: "/import" });
    fireEvent.change(await screen.findByTestId("import-paste"), {
      target: { value: "3;fio-3.33;..." },
    });
    fireEvent.click(screen.getByTestId("import-paste-add"));
    await screen.findByTestId("import-preview");
    const row = screen.getByTestId("import-job").textContent ?? "";
    expect(row).toContain("41.9 MB/s");
    expect(row).toContain("10.2k IOPS");
    expect(row).toContain("250 µs");
    // the format hint's choices are the server's registry, "Detect" first
    const select = screen.getByTestId("import-format-select");
    await waitFor(() => expect(select.querySelectorAll("option")).toHaveLength(3));
    expect([...select.querySelectorAll("option")].map((o) => o.textContent)).toEqual([
      "Detect",
      "CrystalDiskMark: text export",
      "fio: --output-format=json / --output-format=json+",
    ]);
    fireEvent.change(screen.getByTestId("import-host"), { target: { value: "lab-7" } });
    fireEvent.click(screen.getByTestId("import-store"));
    expect((await screen.findByTestId("import-stored")).textContent).toContain(
      "imported from fio 3.33",
    );
    const stored = calls.filter((c) => c.method === "POST").at(-1);
    expect(stored?.body).toMatchObject({ team_id: "t1", host: "lab-7", text: "3;fio-3.33;..." });
  });

  it("shows the server's 422 naming the format and line", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "POST /api/v1/imports": () => ({
        status: 422,
        body: {
          error: "import_invalid",
          message:
            "unknown line 1: no importer recognises this file (expected the output of one of: fio-json)",
          detail: [
            { field: "file", format: "unknown", line: 1, expected: "fio-json", message: "x" },
          ],
        },
      }),
    });
    renderAt(<Import />, { path: "/import" });
    fireEvent.change(await screen.findByTestId("import-paste"), { target: { value: "hello" } });
    fireEvent.click(screen.getByTestId("import-paste-add"));
    expect((await screen.findByTestId("import-error")).textContent).toContain("line 1");
  });
});

describe("Published figures", () => {
  it("reads one figure a line and names the line that does not read", () => {
    expect(parseFigures("SEQ1M Q8T1 read; 7000; MB/s\n\n4K random read\t1000000\tIOPS")).toEqual({
      figures: [
        { test: "SEQ1M Q8T1 read", value: 7000, unit: "MB/s" },
        { test: "4K random read", value: 1000000, unit: "IOPS" },
      ],
      error: null,
    });
    expect(parseFigures("a; 1; MB/s\nb; fast; MB/s").error).toContain("line 2");
    expect(parseFigures("a; 1; furlongs").error).toContain("the unit is one of");
    expect(parseFigures("  ").error).toBe("type at least one figure");
  });

  it("reads a figure's direction as the server does when none is given", () => {
    expect(figureDirection("4K random write")).toBe("write");
    expect(figureDirection("RND4K Q32T1 WR")).toBe("write");
    expect(figureDirection("SEQ1M Q8T1 read")).toBe("read");
    expect(figureDirection("wrap-around read")).toBe("read");
  });

  it("stores a datasheet's figures as a published run", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "GET /api/v1/imports/formats": () => ({ body: FORMATS }),
      "POST /api/v1/imports/published": () => ({
        status: 201,
        body: { ...result(false), format: "published", tool: "Samsung" },
      }),
    });
    renderAt(<Import />, { path: "/import" });
    fireEvent.change(await screen.findByTestId("published-vendor"), {
      target: { value: "Samsung" },
    });
    fireEvent.change(screen.getByTestId("published-model"), { target: { value: "990 PRO 2TB" } });
    fireEvent.change(screen.getByTestId("published-reference"), {
      target: { value: "datasheet rev 1.0 p. 3" },
    });
    fireEvent.change(screen.getByTestId("published-figures"), {
      target: { value: "SEQ1M Q8T1 read; 7450; MB/s" },
    });
    // what the figures read as, with unit and direction, before anything is stored
    expect(screen.getByTestId("published-preview-figure").textContent).toBe(
      "SEQ1M Q8T1 read: 7,450 MB/s (read)",
    );
    fireEvent.click(screen.getByTestId("published-store"));
    expect((await screen.findByTestId("published-stored")).textContent).toContain(
      "not measured here",
    );
    const sent = calls.find((c) => c.path === "/api/v1/imports/published");
    expect(sent?.body).toEqual({
      team_id: "t1",
      vendor: "Samsung",
      model: "990 PRO 2TB",
      reference: "datasheet rev 1.0 p. 3",
      figures: [{ test: "SEQ1M Q8T1 read", value: 7450, unit: "MB/s" }],
    });
  });
});
