import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(__dirname) } },
  test: {
    include: ["server/**/*.test.ts", "inngest/**/*.test.ts", "test/**/*.test.ts", "db/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup.ts"],
    pool: "forks",
    // Two cores: two files at a time, each with its own database (PGlite) or tenants (PostgreSQL).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
