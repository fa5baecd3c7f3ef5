import path from "node:path";
import { defineConfig } from "vitest/config";

const root = path.resolve(__dirname, "../..");
export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    include: ["bench/profile/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup.ts"],
    pool: "forks",
    testTimeout: 600_000,
    hookTimeout: 60_000,
  },
});
