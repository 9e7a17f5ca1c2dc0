import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// The API runs on the same origin in production (the backend serves dist/ at /).
// In development, `npm run dev` proxies /api to a local server.
const apiTarget = process.env.IOWATT_URL ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: { "/api": apiTarget },
  },
  build: {
    outDir: "dist",
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["src/test/setup.ts"],
  },
});
