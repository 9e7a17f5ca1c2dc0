import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// What `make ui` builds with (`make up` installs no test tool: vitest.config.ts adds the tests).
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
});
