import { defineConfig, mergeConfig } from "vitest/config";
import viteConfig from "./vite.config";

// The unit tests' configuration: the build's (vite.config.ts) and vitest's, kept apart so that the
// build loads no test package (`make up` installs the UI's dependencies without devDependencies).
// logic tests that use the browser's storage (the session token): run in jsdom
const BROWSER_LOGIC = ["src/queries/runs.test.ts"];

export default mergeConfig(
  viteConfig,
  defineConfig({
    // Two projects: logic tests (*.test.ts) run in Node, and only the component tests (*.test.tsx)
    // and the logic tests that need a window (BROWSER_LOGIC: localStorage) pay for a jsdom window
    // per file (most of vitest's time on two cores was setting those up).
    test: {
      // One module graph and one window per worker process, not per file: the files' imports (React,
      // Recharts) and jsdom windows were most of vitest's CPU. What a test changes globally is undone
      // after it (setup.ts: cleanup, storage; stubbed globals and mocks restored here).
      isolate: false,
      // Worker threads, not child processes: 726 tests in 41.7-42.7 against 47.1-48.2 CPU-s
      // (two alternating pairs, load 6, 2026-12-07); the modules and windows are per worker either way.
      pool: "threads",
      // a bound on a test that never finishes, not a deadline for a slow one: with four pytest
      // processes beside it on two cores a test's first render can take seconds (src/test/setup.ts)
      testTimeout: 30_000,
      unstubGlobals: true,
      restoreMocks: true,
      projects: [
        {
          extends: true,
          test: {
            name: "logic",
            environment: "node",
            include: ["src/**/*.test.ts"],
            exclude: BROWSER_LOGIC,
          },
        },
        {
          extends: true,
          test: {
            name: "dom",
            environment: "jsdom",
            include: ["src/**/*.test.tsx", ...BROWSER_LOGIC],
            setupFiles: ["src/test/setup.ts"],
          },
        },
      ],
    },
  }),
);
