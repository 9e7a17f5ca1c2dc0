// Regenerates the API types from openapi.json into a temp file and fails when the
// committed src/client/schema.d.ts differs (the generator is pinned in package.json).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = mkdtempSync(join(tmpdir(), "iowatt-client-"));
const fresh = join(dir, "schema.d.ts");
try {
  execFileSync(
    join(root, "node_modules", ".bin", "openapi-typescript"),
    [join(root, "openapi.json"), "-o", fresh],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const committed = readFileSync(join(root, "src", "client", "schema.d.ts"), "utf8");
  if (readFileSync(fresh, "utf8") !== committed) {
    console.error(
      "check:client: src/client/schema.d.ts is out of date with openapi.json; run `npm run gen:client`",
    );
    process.exit(1);
  }
  console.log("check:client: generated client is up to date");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
