import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { keys } from "./keys";
import { runQuery, runsQuery } from "./runs";

/** What `invalidateQueries({ queryKey: prefix })` matches: every key that starts with it. */
const covers = (prefix: readonly unknown[], key: readonly unknown[]) =>
  prefix.every((p, i) => JSON.stringify(p) === JSON.stringify(key[i]));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === "client" ? [] : sources(p);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [p] : [];
  });
}

describe("query keys", () => {
  it("invalidation prefixes cover the queries they are meant to refresh", () => {
    expect(covers(keys.runs.lists(), runsQuery({ status: "running" }).queryKey)).toBe(true);
    expect(covers(keys.runs.lists(), runQuery("r1").queryKey)).toBe(false);
    expect(covers(keys.auth.tokens(), keys.auth.tokenList(true))).toBe(true);
    expect(covers(keys.campaigns.all(), keys.campaigns.detail("c1"))).toBe(true);
    expect(covers(keys.agents.all(), keys.agents.enrollmentTokens())).toBe(true);
  });

  it("are written nowhere but keys.ts", () => {
    const src = join(__dirname, "..");
    const files = sources(src);
    expect(files.length).toBeGreaterThan(20);
    const literal = files
      .filter((f) => !f.endsWith(join("queries", "keys.ts")))
      .filter((f) => /queryKey:\s*\[/.test(readFileSync(f, "utf8")))
      .map((f) => relative(src, f));
    expect(literal).toEqual([]);
  });
});
