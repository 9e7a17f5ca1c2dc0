// The file workloads in the UI: the run page's panel, the workload form's 422s beside
// their fields, the new-run form's scale and directory-only targets, the workloads list.
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { RunRead, ValidityFlag } from "../../client/types";
import { setToken } from "../../lib/auth";
import { POSTMARK_DEFAULTS } from "../../lib/fileWorkload";
import { CampaignForm } from "../../routes/Campaigns";
import { NewRun } from "../../routes/NewRun";
import { Workloads } from "../../routes/Workloads";
import { POSTMARK_SUMMARY, VDBENCH_INTERVALS, VDBENCH_SUMMARY } from "../../test/fileFixtures";
import { policyAgent } from "../../test/fixtures";
import { renderAt, stubApi } from "../../test/render";
import { summaryLine } from "../Run/RunSummary";
import { FileWorkloadForm } from "./FileWorkloadForm";
import { FileWorkloadPanel } from "./FileWorkloadPanel";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const CACHE: ValidityFlag = {
  flag: "cache_resident",
  message: "the file set fits in the page cache: it may measure memory, not the device",
} as ValidityFlag;

const VD_PARAMS = `fsd=fsd1,anchor=H:,depth=1,width=5,files=20,size=5G
fwd=fwd1,fsd=fsd1,rdpct=90,xfersize=128k,fileselect=random,fileio=random,threads=64
rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=10h,interval=30
`;
const BIG_FACTS = {
  mode: "vdbench",
  threads: 64,
  max_block_bytes: 131072,
  bytes_written_max: null,
  runtime_s_max: 36,
  dataset_bytes: 65 * 5 * 1048576,
  files: 65,
  directories: 5,
  o_direct: false,
};
const block = {
  id: "w-quick",
  name: "quick",
  description: "a few seconds",
  builtin: true,
  spec: {
    kind: "block",
    jobs: [{ name: "r", rw: "randread", bs_bytes: 4096, size_bytes: 1 << 24, runtime_s: 1 }],
    passes: 1,
  },
};
const pmLow = {
  id: "w-pm",
  name: "postmark-low",
  description: "PostMark, Song & Lee's Low level",
  builtin: true,
  spec: {
    kind: "postmark",
    jobs: [],
    passes: 1,
    postmark: {
      ...POSTMARK_DEFAULTS,
      number: 10_000,
      transactions: 50_000,
      subdirectories: 10,
      size_low_bytes: 334848,
      size_high_bytes: 334848,
      read_block_bytes: 4096,
      write_block_bytes: 4096,
    },
    vdbench: null,
    facts: null,
  },
};
const vdBig = {
  id: "w-vd",
  name: "vdbench-big",
  description: "vdbench large files; full size 500 GiB for 10 h",
  builtin: true,
  spec: {
    kind: "vdbench",
    jobs: [],
    passes: 1,
    postmark: null,
    vdbench: { parameters: VD_PARAMS, scale: 0.001, elapsed_s: null },
    facts: BIG_FACTS,
  },
};
const WORKLOADS = [block, pmLow, vdBig];

describe("FileWorkloadPanel", () => {
  it("shows PostMark's operations, report counts and scale, the cache flag beside the figures", () => {
    render(
      <FileWorkloadPanel
        summary={{ ...POSTMARK_SUMMARY, scale: 0.01 }}
        intervals={null}
        validity={[CACHE]}
      />,
    );
    const panel = screen.getByTestId("file-workload-panel");
    expect(panel.dataset.mode).toBe("postmark");
    expect(screen.getByTestId("run-scale").textContent).toBe("scale ×0.01");
    const ops = screen.getByTestId("file-ops");
    const rows = within(ops).getAllByRole("row").slice(1);
    expect(rows.map((r) => r.getAttribute("data-op"))).toEqual([
      "create",
      "read",
      "append",
      "delete",
    ]);
    const create = POSTMARK_SUMMARY.ops[0];
    // humane units: 95207 ns → "95.2 µs", the rate per second with k
    expect(within(rows[0] as HTMLElement).getByText("95.2 µs")).toBeTruthy();
    expect(rows[0]?.textContent).toContain(`${create?.ops}`);
    expect(rows[0]?.textContent).toContain("4.83k/s");
    const report = screen.getByTestId("postmark-report");
    const pm = POSTMARK_SUMMARY.postmark;
    expect(
      within(report)
        .getByText("Files created")
        .closest("tr")
        ?.textContent?.includes(String(pm?.files_created)),
    ).toBe(true);
    expect(report.textContent).toContain(`${pm?.transactions}`);
    // the flag once, in a note above the figures it qualifies (not again on the table's heading)
    expect(screen.getAllByTestId("cache-resident")).toHaveLength(1);
    const note = screen.getByTestId("cache-note");
    expect(note.textContent).toContain("every rate, response time and MB/s below");
    expect(
      note.compareDocumentPosition(screen.getByTestId("file-figures")) &
        Node.DOCUMENT_POSITION_FOLLOWING,
    ).toBeTruthy();
    expect(screen.queryByTestId("file-rate-chart")).toBeNull();
    // the engine's CPU without absurd precision, labelled whose it is
    const cpu = screen.getByTestId("fig-cpu").textContent ?? "";
    expect(cpu).toContain("CPU, engine process");
    expect(cpu).not.toMatch(/\.\d*0 %/); // "0.00 %", "19.70 %"
    expect(cpu).toContain("0 % usr");
    // phases of milliseconds are plotted in ms (not 0.015 s ticks)
    const phases = screen.getByTestId("postmark-phases");
    const pmr = POSTMARK_SUMMARY.postmark;
    const longest = Math.max(
      pmr?.creation_ns ?? 0,
      pmr?.transactions_ns ?? 0,
      pmr?.deletion_ns ?? 0,
    );
    expect(phases.dataset.unit).toBe(longest >= 1e9 ? "s" : longest >= 1e6 ? "ms" : "µs");
    expect(phases.textContent).toContain(`Time per phase (${phases.dataset.unit})`);
  });

  it("shows vdbench's totals and per-interval charts, no flag when the run has none", () => {
    render(<FileWorkloadPanel summary={VDBENCH_SUMMARY} intervals={VDBENCH_INTERVALS} />);
    expect(screen.getByTestId("file-workload-panel").dataset.mode).toBe("vdbench");
    expect(screen.getByTestId("file-rate-chart")).toBeTruthy();
    expect(screen.getByTestId("file-resp-chart")).toBeTruthy();
    expect(screen.getByTestId("interval-note").textContent).toContain(
      `${VDBENCH_INTERVALS.intervals} intervals`,
    );
    expect(screen.queryByTestId("cache-resident")).toBeNull();
    const names = within(screen.getByTestId("file-ops"))
      .getAllByRole("row")
      .slice(1)
      .map((r) => r.getAttribute("data-op"));
    expect(names.slice(0, 2)).toEqual(["read", "write"]);
    expect(screen.getByTestId("fig-cpu").textContent).toContain("CPU, host (all CPUs)");
    // mean responses of a few µs: the chart is in µs, not 0.005 ms
    expect(screen.getByTestId("file-resp-chart").dataset.unit).toBe("µs");
  });

  it("draws no per-interval charts for a run of one interval (a dot on an empty axis)", () => {
    const one = {
      ...VDBENCH_INTERVALS,
      intervals: 1,
      points: VDBENCH_INTERVALS.points.slice(0, 1),
    };
    render(<FileWorkloadPanel summary={VDBENCH_SUMMARY} intervals={one} />);
    expect(screen.queryByTestId("file-rate-chart")).toBeNull();
    expect(screen.queryByTestId("file-resp-chart")).toBeNull();
    expect(screen.getByTestId("interval-note").textContent).toContain("One interval");
  });

  it("names the warm-up points the charts draw but the totals leave out", () => {
    const pts = VDBENCH_INTERVALS.points.map((p, i) => ({ ...p, warmup: i < 2 }));
    const warm = { ...VDBENCH_INTERVALS, points: pts };
    render(<FileWorkloadPanel summary={VDBENCH_SUMMARY} intervals={warm} />);
    const note = screen.getByTestId("interval-note").textContent ?? "";
    expect(note).toContain(`warm-up (points ${pts[0]?.t_s}–${pts[1]?.t_s} s)`);
    expect(note).toContain("left out of the totals");
    expect(screen.getByTestId("run-scale").textContent).toBe(
      `scale ×${VDBENCH_SUMMARY.scale ?? 1}`,
    );
  });
});

describe("the run's summary line", () => {
  it("leads a file run with its own rate and MB/s, not jobs[0]'s system calls", () => {
    const run = {
      workload: { kind: "postmark", jobs: [] },
      jobs: [],
      file_workload: POSTMARK_SUMMARY,
      target_path: "/srv/bench",
      device_name: null,
      status: "succeeded",
    } as unknown as RunRead;
    const line = summaryLine(run, undefined);
    expect(line.startsWith("PostMark on /srv/bench: 7.79k transactions/s, read ")).toBe(true);
    expect(line).toContain("MB/s");
    const vd = { ...run, workload: { kind: "vdbench", jobs: [] }, file_workload: VDBENCH_SUMMARY };
    expect(summaryLine(vd as unknown as RunRead, undefined)).toContain(
      "vdbench file set on /srv/bench: ",
    );
    expect(summaryLine(vd as unknown as RunRead, undefined)).toContain(" ops/s, read ");
  });
});

describe("FileWorkloadForm", () => {
  it("puts the server's 422 beside the PostMark field it names", async () => {
    setToken("t");
    const calls = stubApi({
      "POST /api/v1/workloads": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "spec.postmark.number: must be at most 100000000",
          detail: [{ field: "spec.postmark.number", message: "must be at most 100000000" }],
        },
      }),
    });
    renderAt(<FileWorkloadForm teamId="t1" onCreated={() => {}} />);
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "mine" } });
    fireEvent.change(screen.getByLabelText(/Files \(set number\)/), {
      target: { value: "200000000" },
    });
    fireEvent.click(screen.getByTestId("submit-workload"));
    const err = await screen.findByTestId("field-error-pm.number");
    expect(err.textContent).toBe("must be at most 100000000");
    expect(err.dataset.source).toBe("server");
    const body = calls.find((c) => c.method === "POST")?.body as {
      spec: { kind: string; postmark: { number: number; size_low_bytes: number }; jobs: [] };
    };
    expect(body.spec.kind).toBe("postmark");
    expect(body.spec.jobs).toEqual([]);
    expect(body.spec.postmark.number).toBe(200_000_000);
    expect(body.spec.postmark.size_low_bytes).toBe(500);
  });

  it("checks sizes and biases before sending, and shows the engine's refusal of a vdbench file", async () => {
    setToken("t");
    const calls = stubApi({
      "POST /api/v1/workloads": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "x",
          detail: [
            {
              field: "spec.vdbench.parameters",
              message: "bogus: fsd: parameter 'bogus' is not supported by iowatt-engine",
            },
          ],
        },
      }),
    });
    renderAt(<FileWorkloadForm teamId="t1" onCreated={() => {}} />);
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "mine" } });
    fireEvent.change(screen.getByLabelText(/Bias read/), { target: { value: "11" } });
    fireEvent.change(screen.getByLabelText(/Smallest file/), { target: { value: "4q" } });
    fireEvent.click(screen.getByTestId("submit-workload"));
    expect((await screen.findByTestId("field-error-pm.bias_read")).dataset.source).toBe("client");
    expect(screen.getByTestId("field-error-pm.size_low")).toBeTruthy();
    expect(calls.filter((c) => c.method === "POST")).toHaveLength(0);

    fireEvent.click(screen.getByTestId("kind-vdbench"));
    fireEvent.change(screen.getByLabelText(/^Scale/), { target: { value: "0.5" } });
    fireEvent.click(screen.getByTestId("submit-workload"));
    const err = await screen.findByTestId("field-error-vd.parameters");
    expect(err.textContent).toContain("'bogus' is not supported");
    const body = calls.find((c) => c.method === "POST")?.body as {
      spec: { kind: string; vdbench: { scale: number; parameters: string }; postmark: null };
    };
    expect(body.spec.kind).toBe("vdbench");
    expect(body.spec.vdbench.scale).toBe(0.5);
    expect(body.spec.postmark).toBeNull();
  });
});

function setupNewRun(path = "/") {
  setToken("tok");
  const calls = stubApi({
    "GET /api/v1/agents": () => ({ body: { items: [policyAgent()], total: 1 } }),
    "GET /api/v1/workloads": () => ({ body: { items: WORKLOADS, total: WORKLOADS.length } }),
    "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
    "POST /api/v1/workloads/facts": () => ({
      body: { ...BIG_FACTS, dataset_bytes: 65 * 10 * 1048576, runtime_s_max: 72 },
    }),
    "POST /api/v1/runs": () => ({ status: 201, body: { id: "r-new" } }),
  });
  renderAt(<NewRun />, { path });
  return calls;
}

describe("NewRun with a file workload", () => {
  it("offers directory targets only, a scale instead of the length, and sends the factor", async () => {
    const calls = setupNewRun("/?workload=w-vd");
    const scale = (await screen.findByTestId("scale-input")) as HTMLInputElement;
    // the preset's own scale is where the field starts; no block-only length control
    expect(scale.value).toBe("0.001");
    expect(screen.queryByTestId("shorten-select")).toBeNull();
    expect(screen.getByTestId("directory-note").textContent).toContain("need a directory target");
    const options = within(screen.getByTestId("target-select")).getAllByRole(
      "option",
    ) as HTMLOptionElement[];
    expect(options.filter((o) => !o.disabled).map((o) => o.dataset.kind)).toEqual(["directory"]);
    expect(options.find((o) => o.dataset.kind === "file")?.textContent).toContain(
      "not a directory",
    );
    // at the saved scale: the stored facts, no question to the engine
    expect(screen.getByTestId("scale-fileset").textContent).toBe(
      "File set: 325 MiB in 65 files, 5 directories; duration 36 s",
    );
    fireEvent.change(scale, { target: { value: "0.002" } });
    await waitFor(() =>
      expect(screen.getByTestId("scale-fileset").textContent).toBe(
        "File set: 650 MiB in 65 files, 5 directories; duration 1 min 12 s",
      ),
    );
    const ask = calls.filter((c) => c.path === "/api/v1/workloads/facts");
    expect((ask.at(-1)?.body as { scale: number } | undefined)?.scale).toBe(2);
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    const run = calls.find((c) => c.path === "/api/v1/runs")?.body as Record<string, unknown>;
    expect(run.workload_id).toBe("w-vd");
    expect(run.scale).toBe(2);
    expect(run.shorten).toBeNull();
    expect(run.target_path).toBe("/srv/bench");
  });

  it("scales PostMark's files and transactions as typed, and refuses a bad scale", async () => {
    const calls = setupNewRun("/?workload=w-pm");
    const scale = (await screen.findByTestId("scale-input")) as HTMLInputElement;
    expect(scale.value).toBe("1");
    expect(screen.getByTestId("scale-fileset").textContent).toContain("10k files");
    fireEvent.change(scale, { target: { value: "0.01" } });
    expect(screen.getByTestId("scale-fileset").textContent).toBe(
      "File set: 31.9 MiB in 100 files, 10 directories; duration until 500 transactions are done (size-bound)",
    );
    fireEvent.change(scale, { target: { value: "0" } });
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-scale")).dataset.source).toBe("client");
    expect(calls.filter((c) => c.path === "/api/v1/runs")).toHaveLength(0);
  });

  it("keeps the length and every target for a block workload", async () => {
    setupNewRun();
    await screen.findByTestId("shorten-select");
    expect(screen.queryByTestId("scale-input")).toBeNull();
    expect(screen.queryByTestId("directory-note")).toBeNull();
    const options = within(await screen.findByTestId("target-select")).getAllByRole(
      "option",
    ) as HTMLOptionElement[];
    expect(options.every((o) => !o.disabled)).toBe(true);
  });
});

describe("Workloads page", () => {
  it("lists each workload's kind, its seed and its file set", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/workloads": () => ({ body: { items: WORKLOADS, total: WORKLOADS.length } }),
      "GET /api/v1/auth/me": () => ({
        body: { id: "u", email: "a@b", teams: [{ id: "t1", name: "A", role: "admin" }] },
      }),
    });
    renderAt(<Workloads />, { path: "/workloads" });
    const rows = await screen.findAllByTestId("workload-row");
    const by = (name: string) => rows.find((r) => r.dataset.name === name) as HTMLElement;
    expect(within(by("postmark-low")).getByTestId("workload-kind").textContent).toBe("PostMark");
    expect(within(by("vdbench-big")).getByTestId("workload-kind").textContent).toBe(
      "vdbench file set",
    );
    expect(within(by("quick")).getByTestId("workload-kind").dataset.kind).toBe("block");
    expect(within(by("postmark-low")).getByTestId("preset-seed").textContent).toContain(
      "Song & Lee",
    );
    expect(by("vdbench-big").textContent).toContain("325 MiB in 65 files, 5 directories");
    expect(by("vdbench-big").textContent).toContain("scale ×0.001");
    expect(by("postmark-low").textContent).toContain("3.12 GiB in 10k files");
  });
});

describe("a campaign of a file workload", () => {
  it("takes a scale, offers directory targets only and sends the factor", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [policyAgent()], total: 1 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [pmLow], total: 1 } }),
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/campaigns": () => ({ status: 201, body: { id: "c1" } }),
    });
    renderAt(<CampaignForm />);
    const scale = (await screen.findByTestId("scale-input")) as HTMLInputElement;
    expect(scale.value).toBe("1");
    expect(screen.getByTestId("directory-note")).toBeTruthy();
    const select = await screen.findByTestId("target-select");
    const enabled = (within(select).getAllByRole("option") as HTMLOptionElement[]).filter(
      (o) => !o.disabled,
    );
    expect(enabled.map((o) => o.dataset.kind)).toEqual(["directory"]);
    fireEvent.change(scale, { target: { value: "0.01" } });
    expect(screen.getByTestId("scale-fileset").textContent).toContain("100 files");
    fireEvent.change(screen.getByLabelText(/^Name/), { target: { value: "pm" } });
    fireEvent.click(screen.getByTestId("submit-campaign"));
    await waitFor(() => expect(calls.some((c) => c.path === "/api/v1/campaigns")).toBe(true));
    const body = calls.find((c) => c.path === "/api/v1/campaigns")?.body as {
      scale: number;
      targets: { target_path: string }[];
    };
    expect(body.scale).toBe(0.01);
    expect(body.targets[0]?.target_path).toBe("/srv/bench");
  });
});
