import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";

// findBy*/waitFor wait for what a test names, never for a time: their default 1 s window was a
// deadline on a loaded machine (`make test` runs vitest beside four pytest processes on two cores),
// and App.test's "drops the token on any 401" and NewRun.test's "sends a single job" missed it at
// load 10-12 while passing alone. A window of 15 s only lengthens the report of a real failure;
// vitest's per-test timeout (testTimeout, 30 s in vite.config.ts) bounds a test that never finishes.
configure({ asyncUtilTimeout: 15_000 });

afterEach(() => {
  cleanup();
  localStorage.clear();
});
