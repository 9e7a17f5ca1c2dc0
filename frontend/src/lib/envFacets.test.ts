import { describe, expect, it } from "vitest";
import { ENV_GROUP_BY, envFilterLabel, parseEnvFilters } from "./envFacets";

describe("environment facets", () => {
  it("keeps known FIELD:VALUE filters once, in order", () => {
    expect(
      parseEnvFilters([
        "raid_level:raid10",
        "colour:red",
        "kind:",
        "raid_level:raid10",
        "kind: san ",
      ]),
    ).toEqual(["raid_level:raid10", "kind:san"]);
  });
  it("names groupings and filters for people", () => {
    expect(ENV_GROUP_BY).toContain("env.raid_level");
    expect(envFilterLabel("transport:fc")).toBe("fabric = fc");
  });
});
