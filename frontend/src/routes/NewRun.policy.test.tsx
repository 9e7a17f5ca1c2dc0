// The new-run form offers only what the host allows (ADR 0009): its targets, its meters, no
// writes where the host refuses them, and destructive writes only after the typed confirmation.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentRead } from "../client/types";
import { setToken } from "../lib/auth";
import { limits, POLICY, policyAgent } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { NewRun } from "./NewRun";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const DIR = "/srv/bench";
const FILE = "/data/ref.bin";
const NVME = "/dev/disk/by-id/nvme-Samsung_SSD_990_PRO_S7DNNJ0X123456";
const HDD = "/dev/disk/by-id/ata-ST4000NM000A_WS20ABCD";

const job = (rw: string) => ({
  name: rw,
  rw,
  bs_bytes: 4096,
  size_bytes: 1 << 24,
  iodepth: 1,
  numjobs: 1,
  runtime_s: 1,
});
const WORKLOADS = [
  {
    id: "w-read",
    name: "RND4K read",
    description: "",
    builtin: true,
    spec: { jobs: [job("randread")] },
  },
  {
    id: "w-mixed",
    name: "mixed",
    description: "",
    builtin: true,
    spec: { jobs: [job("read"), job("randrw")] },
  },
];

function setup(agents: AgentRead[] = [policyAgent()]) {
  setToken("tok");
  const calls = stubApi({
    "GET /api/v1/agents": () => ({ body: { items: agents, total: agents.length } }),
    "GET /api/v1/workloads": () => ({ body: { items: WORKLOADS, total: WORKLOADS.length } }),
    "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
    "POST /api/v1/runs": () => ({ status: 201, body: { id: "r-new" } }),
  });
  renderAt(<NewRun />);
  return calls;
}

const posts = (calls: ReturnType<typeof stubApi>) => calls.filter((c) => c.method === "POST");
const targetSelect = () => screen.getByTestId("target-select") as HTMLSelectElement;
const option = (select: HTMLElement, value: string) =>
  within(select)
    .getAllByRole("option")
    .find((o) => (o as HTMLOptionElement).value === value) as HTMLOptionElement;

describe("NewRun and the host policy", () => {
  it("offers exactly the host's targets, labelled with kind, access and destructive", async () => {
    setup();
    await screen.findByTestId("target-select");
    const options = within(targetSelect()).getAllByRole("option") as HTMLOptionElement[];
    expect(options.map((o) => o.value)).toEqual(POLICY.targets.map((t) => t.path));
    expect(options[0]?.textContent).toBe(`${DIR} (directory, read-write)`);
    expect(options[1]?.textContent).toBe(`${FILE} (file, read-only)`);
    expect(options[2]?.textContent).toContain("destructive writes allowed");
    expect(options[2]?.textContent).toContain("Samsung SSD 990 PRO 2TB");
    // No free-text path: the form has no textbox for the target.
    expect(screen.queryByRole("textbox", { name: /Target/ })).toBeNull();
    expect(screen.getByTestId("host-limits").textContent).toBe(
      "host limits: threads ≤ 16 · iodepth ≤ 64",
    );
  });

  it("explains an empty target list with the host command and sends nothing", async () => {
    const calls = setup([
      policyAgent({
        policy: {
          targets: [],
          meters: [],
          default_meter: null,
          limits: limits(),
          allowed_dbms: [],
        },
      }),
    ]);
    const note = await screen.findByTestId("no-targets");
    expect(note.textContent).toContain("iowatt-agent targets add PATH");
    expect(note.textContent).toContain("allows no target yet");
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-target")).dataset.source).toBe("client");
    expect(posts(calls)).toHaveLength(0);
  });

  it("says an agent without a reported policy must be upgraded", async () => {
    setup([policyAgent({ policy: null })]);
    const note = await screen.findByTestId("no-targets");
    expect(note.textContent).toContain("has not reported a host policy");
    expect(note.textContent).toContain("iowatt-agent targets add PATH");
  });

  it("disables write workloads on a read-only file target, with the reason and the fix", async () => {
    const calls = setup();
    await screen.findByTestId("target-select");
    const workload = screen.getByRole("combobox", { name: /Built-in workload/ });
    await waitFor(() => expect(option(workload, "w-mixed")).toBeTruthy());
    expect(option(workload, "w-mixed").disabled).toBe(false);
    fireEvent.change(workload, { target: { value: "w-mixed" } });
    fireEvent.change(targetSelect(), { target: { value: FILE } });
    // The mixed workload writes: disabled, the reading one is chosen instead.
    expect(option(workload, "w-mixed").disabled).toBe(true);
    expect((workload as HTMLSelectElement).value).toBe("w-read");
    const why = screen.getByTestId("write-refusal").textContent ?? "";
    expect(why).toContain("read-only file");
    expect(why).toContain(`iowatt-agent targets add --file ${FILE} --allow-write`);

    // Single job: the writing rw values are disabled too; a write chosen before is refused.
    fireEvent.click(screen.getByTestId("mode-custom"));
    const rw = screen.getByRole("combobox", { name: /rw/ });
    expect(option(rw, "randread").disabled).toBe(false);
    for (const w of ["write", "randwrite", "rw", "randrw"])
      expect(option(rw, w).disabled).toBe(true);
    fireEvent.change(targetSelect(), { target: { value: DIR } });
    fireEvent.change(rw, { target: { value: "randwrite" } });
    fireEvent.change(targetSelect(), { target: { value: FILE } });
    fireEvent.click(screen.getByTestId("submit-run"));
    const err = await screen.findByTestId("field-error-jobs.0.rw");
    expect(err.textContent).toContain("--allow-write");
    expect(posts(calls)).toHaveLength(0);

    // Reading from it is fine.
    fireEvent.change(rw, { target: { value: "randread" } });
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    expect(posts(calls)[0]?.body).toMatchObject({ target_path: FILE, destructive: false });
  });

  it("refuses writes to a device the host did not mark destructive", async () => {
    const calls = setup();
    await screen.findByTestId("target-select");
    fireEvent.change(targetSelect(), { target: { value: HDD } });
    fireEvent.click(screen.getByTestId("mode-custom"));
    expect(screen.getByTestId("write-refusal").textContent).toContain(
      `iowatt-agent targets add --device ${HDD} --destructive`,
    );
    expect(option(screen.getByRole("combobox", { name: /rw/ }), "write").disabled).toBe(true);
    expect(posts(calls)).toHaveLength(0);
  });

  it("offers the host's meters by name, the default marked and chosen, and none", async () => {
    const calls = setup();
    await screen.findByRole("option", { name: /plug \(shelly/ });
    const meter = screen.getByTestId("meter-select") as HTMLSelectElement;
    const labels = within(meter)
      .getAllByRole("option")
      .map((o) => o.textContent);
    expect(labels).toEqual([
      "bmc (ipmi, bmc) — host default",
      "plug (shelly, plug)",
      "none (no power measurement)",
    ]);
    expect(meter.value).toBe("bmc");
    expect(screen.queryByRole("textbox", { name: /Wattmeter/ })).toBeNull();
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    expect(posts(calls)[0]?.body).toMatchObject({ meter: "bmc" });
  });

  it("sends meter '' when the user picks none", async () => {
    const calls = setup();
    await screen.findByRole("option", { name: /plug \(shelly/ });
    fireEvent.change(screen.getByTestId("meter-select"), { target: { value: "" } });
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    expect(posts(calls)[0]?.body).toMatchObject({ meter: "" });
  });

  it("asks for the device's model before a destructive write and only then sends destructive", async () => {
    const calls = setup();
    await screen.findByTestId("target-select");
    fireEvent.change(targetSelect(), { target: { value: NVME } });
    fireEvent.click(screen.getByTestId("mode-custom"));
    fireEvent.change(screen.getByRole("combobox", { name: /rw/ }), {
      target: { value: "randwrite" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    const dialog = await screen.findByTestId("destructive-dialog");
    expect(dialog.textContent).toContain(NVME);
    expect(dialog.textContent).toContain("Type Samsung SSD 990 PRO 2TB");
    expect(posts(calls)).toHaveLength(0);
    const input = within(dialog).getByTestId("destructive-input");
    const confirm = within(dialog).getByTestId("destructive-confirm") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);

    // Near misses do not confirm: case, a missing character, surrounding spaces.
    for (const wrong of [
      "samsung ssd 990 pro 2tb",
      "Samsung SSD 990 PRO 2T",
      " Samsung SSD 990 PRO 2TB",
    ]) {
      fireEvent.change(input, { target: { value: wrong } });
      await waitFor(() => expect(input.dataset.ok).toBe("false"));
      expect(confirm.disabled).toBe(true);
    }
    // Cancel sends nothing.
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByTestId("destructive-dialog")).toBeNull();
    expect(posts(calls)).toHaveLength(0);

    fireEvent.click(screen.getByTestId("submit-run"));
    const again = await screen.findByTestId("destructive-dialog");
    fireEvent.change(within(again).getByTestId("destructive-input"), {
      target: { value: "Samsung SSD 990 PRO 2TB" },
    });
    const ok = within(again).getByTestId("destructive-confirm") as HTMLButtonElement;
    await waitFor(() => expect(ok.disabled).toBe(false));
    fireEvent.click(ok);
    await screen.findByTestId("run-page");
    expect(posts(calls)).toHaveLength(1);
    expect(posts(calls)[0]?.body).toMatchObject({
      target_path: NVME,
      destructive: true,
      workload: { jobs: [{ rw: "randwrite" }] },
    });
  });

  it("accepts the serial number (checked against the host's SHA-256) instead of the model", async () => {
    const calls = setup();
    await screen.findByTestId("target-select");
    fireEvent.change(targetSelect(), { target: { value: NVME } });
    fireEvent.change(screen.getByRole("combobox", { name: /Built-in workload/ }), {
      target: { value: "w-mixed" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    const dialog = await screen.findByTestId("destructive-dialog");
    const input = within(dialog).getByTestId("destructive-input");
    fireEvent.change(input, { target: { value: "S7DNNJ0X123457" } });
    await waitFor(() => expect(input.dataset.ok).toBe("false"));
    fireEvent.change(input, { target: { value: "S7DNNJ0X123456" } });
    await waitFor(() => expect(input.dataset.ok).toBe("true"));
    fireEvent.click(within(dialog).getByTestId("destructive-confirm"));
    await screen.findByTestId("run-page");
    expect(posts(calls)[0]?.body).toMatchObject({ workload_id: "w-mixed", destructive: true });
  });

  it("reads a destructive device without asking (destructive stays false)", async () => {
    const calls = setup();
    await screen.findByTestId("target-select");
    fireEvent.change(targetSelect(), { target: { value: NVME } });
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    expect(screen.queryByTestId("destructive-dialog")).toBeNull();
    expect(posts(calls)[0]?.body).toMatchObject({
      target_path: NVME,
      workload_id: "w-read",
      destructive: false,
    });
  });
});
