import { describe, expect, it } from "vitest";
import {
  filtersFromParams,
  filtersToParams,
  isFiltered,
  localDayStart,
  NO_FILTERS,
  tagProblem,
  toQuery,
  withFilter,
} from "./runFilters";

const A = "11111111-2222-4333-8444-555555555555";

describe("runs list filters in the URL", () => {
  it("read every filter the URL states and write them back the same", () => {
    const url =
      `q=optane+rack&status=failed&status=cancelled&agent_id=${A}&device_id=${A}` +
      `&environment_id=${A}&workload_id=${A}&campaign_id=${A}&source=import&tag=fw+2.1&tag=nvme` +
      "&env=raid_level%3Araid10&env=kind%3Adas&from=2026-11-02&to=2026-11-04&sort=name&offset=50";
    const f = filtersFromParams(new URLSearchParams(url));
    expect(f).toEqual({
      q: "optane rack",
      status: ["failed", "cancelled"],
      agent_id: A,
      device_id: A,
      environment_id: A,
      workload_id: A,
      campaign_id: A,
      source: "import",
      tag: ["fw 2.1", "nvme"],
      env: ["raid_level:raid10", "kind:das"],
      from: "2026-11-02",
      to: "2026-11-04",
      sort: "name",
      offset: 50,
    });
    expect(filtersFromParams(filtersToParams(f))).toEqual(f);
    expect(filtersToParams(f).toString()).toBe(url);
  });

  it("drop what a URL states wrongly instead of sending it", () => {
    const f = filtersFromParams(
      new URLSearchParams(
        "status=sideways&status=queued,running&agent_id=nope&source=mail&from=yesterday" +
          "&sort=energy&offset=-3&tag=&tag=+x+&q=++&env=colour:blue&env=kind:",
      ),
    );
    expect(f).toEqual({
      status: ["queued", "running"],
      tag: ["x"],
      env: [],
      sort: "-created",
      offset: 0,
    });
  });

  it("leave defaults out, so the plain list is plain /runs", () => {
    expect(filtersToParams(NO_FILTERS).toString()).toBe("");
    expect(isFiltered(NO_FILTERS)).toBe(false);
    expect(isFiltered({ ...NO_FILTERS, sort: "name", offset: 50 })).toBe(false);
    expect(isFiltered({ ...NO_FILTERS, tag: ["x"] })).toBe(true);
    expect(isFiltered({ ...NO_FILTERS, env: ["kind:san"] })).toBe(true);
  });

  it("a filter change starts at the first page; paging keeps the filters", () => {
    const f = { ...NO_FILTERS, status: ["failed" as const], offset: 100 };
    expect(withFilter(f, "q", "x")).toEqual({ ...f, q: "x", offset: 0 });
    expect(withFilter(f, "offset", 150)).toEqual({ ...f, offset: 150 });
  });
});

describe("the API query of a page", () => {
  it("names every filter as GET /api/v1/runs does; days are whole local days", () => {
    const f = filtersFromParams(
      new URLSearchParams(
        `status=failed&tag=nvme&env=fstype:xfs&from=2026-11-02&to=2026-11-04&q=x&agent_id=${A}`,
      ),
    );
    const q = toQuery({ ...f, offset: 100 }, 50);
    expect(q).toEqual({
      limit: 50,
      offset: 100,
      sort: "-created",
      status: ["failed"],
      tag: ["nvme"],
      env: ["fstype:xfs"],
      agent_id: A,
      created_from: new Date(2026, 10, 2).toISOString(),
      created_to: new Date(2026, 10, 5).toISOString(), // the end of the 4th, local time
      q: "x",
    });
    expect(localDayStart("2026-12-31", 1)).toBe(new Date(2027, 0, 1).toISOString());
    expect(toQuery(NO_FILTERS, 50)).toEqual({ limit: 50, offset: 0, sort: "-created" });
  });
});

describe("tags", () => {
  it("follow the server's rule", () => {
    for (const ok of ["nvme", "fw 2.1", "rack-3/slot_2", "a:b+c", "x".repeat(64)]) {
      expect(tagProblem(ok)).toBeNull();
    }
    for (const bad of ["", " ", "x".repeat(65), "two  spaces", "semi;colon", "<script>"]) {
      expect(tagProblem(bad)).not.toBeNull();
    }
  });
});
